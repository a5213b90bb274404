// A Global capture on GPU 0 while the same thread allocates on GPU 1: Global mode prohibits
// potentially unsafe calls whatever the device, so CUDA rejects the cudaMalloc (900) and the
// capture on GPU 0 is invalidated. Twin: two_device_fork_ok (GPU 1's memory allocated first).
#include "multi/two_devices.h"

int main() {
  require_two_devices();
  int* data1 = warm_buffer_on(1);
  int* data0 = warm_buffer_on(0);
  cudaStream_t origin = non_blocking_stream();  // on GPU 0
  BumpArgs args0(data0);

  CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args0, origin);
  CHECK(cudaSetDevice(1));
  int* scratch = nullptr;
  CHECK(cudaMalloc(&scratch, kBytes));  // expect: unsafe-call-during-capture
  CHECK(cudaSetDevice(0));
  LAUNCH_BUMP(args0, origin);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(origin, &graph));
  discard(graph);

  CHECK(cudaFree(data0));
  CHECK(cudaSetDevice(1));
  CHECK(cudaFree(data1));
  if (scratch != nullptr) CHECK(cudaFree(scratch));
  return 0;
}
