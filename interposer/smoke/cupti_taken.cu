// A program that holds CUPTI itself (as a profiler would) before it first touches CUDA, then
// makes a capture mistake. Under capguard the program must run exactly as without it, and
// `capguard run` must say that CUPTI was taken and exit 3.
#include <cuda_runtime.h>
#include <cupti.h>

#include <cstdio>

static void CUPTIAPI ignore(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

int main() {
  CUpti_SubscriberHandle subscriber;
  const CUptiResult subscribed = cuptiSubscribe(&subscriber, &ignore, nullptr);
  std::printf("program's own cuptiSubscribe: %d\n", static_cast<int>(subscribed));
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  const cudaError_t sync = cudaStreamSynchronize(stream);
  cudaGraph_t graph;
  const cudaError_t end = cudaStreamEndCapture(stream, &graph);
  std::printf("sync during capture: %d, end capture: %d\n", sync, end);
  return 0;
}
