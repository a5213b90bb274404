// A step counter passed by value: three eager warm-up steps launch step_kernel with step 1, 2, 3;
// the capture then freezes step 4 into the graph, and every replay steps with 4.
#include "common.h"

__global__ void step_kernel(int* data, int step) { data[threadIdx.x] += step; }

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  int step = 0;
  void* argv[2] = {&args.data, &step};
  for (step = 1; step <= 3; ++step)  // warm-up: the counter changes every run
    CHECK(cudaLaunchKernel((const void*)step_kernel, dim3(1), dim3(kThreads), argv, 0, stream));
  CHECK(cudaStreamSynchronize(stream));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));  // expect: graph-argument-frozen
  CHECK(cudaLaunchKernel((const void*)step_kernel, dim3(1), dim3(kThreads), argv, 0, stream));
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (; step <= 8; ++step) CHECK(cudaGraphLaunch(exec, stream));  // each replay adds 4
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return 0;
}
