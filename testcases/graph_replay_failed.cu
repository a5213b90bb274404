// graph-replay-failed: a captured kernel writes through a pointer it reads from device memory;
// after the first replay the program stores a bad pointer there, and the next replay faults.
// cudaGraphLaunch succeeds; the 700 surfaces at the synchronize after it.
#include "common.h"

__global__ void store_through(int** slot) { **slot = 1; }

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  int** slot = nullptr;
  CHECK(cudaMalloc(&slot, sizeof(int*)));
  CHECK(cudaMemcpy(slot, &args.data, sizeof(int*), cudaMemcpyHostToDevice));
  void* argv[] = {&slot};
  CHECK(cudaLaunchKernel((const void*)store_through, dim3(1), dim3(1), argv, 0, nullptr));
  CHECK(cudaDeviceSynchronize());
  cudaStream_t stream = non_blocking_stream();
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  CHECK(cudaLaunchKernel((const void*)store_through, dim3(1), dim3(1), argv, 0, stream));
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));

  int* bad = reinterpret_cast<int*>(0x10);
  CHECK(cudaMemcpy(slot, &bad, sizeof(int*), cudaMemcpyHostToDevice));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));  // expect: graph-replay-failed
  CHECK(cudaDeviceSynchronize());        // the same sticky error again: a consequence
  return 0;
}
