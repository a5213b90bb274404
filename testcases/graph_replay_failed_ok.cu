// Twin of graph_replay_failed: the graph's replay finished (synchronized) before an eager
// kernel faults; the 700 at the next synchronize is not the graph's.
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
  LAUNCH_BUMP(args, stream);
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));  // the replay is done

  int* bad = reinterpret_cast<int*>(0x10);
  CHECK(cudaMemcpy(slot, &bad, sizeof(int*), cudaMemcpyHostToDevice));
  CHECK(cudaLaunchKernel((const void*)store_through, dim3(1), dim3(1), argv, 0, stream));
  CHECK(cudaStreamSynchronize(stream));  // 700 from the eager kernel, not from the graph
  return 0;
}
