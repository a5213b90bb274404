// replay-after-free in a graph built by hand (no capture): a kernel node and a memset node
// hold a buffer that is freed before the replay (the sync after it faults with 700, measured).
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaGraphCreate(&graph, 0));

  cudaMemsetParams set = {};
  set.dst = args.data;
  set.value = 0;
  set.elementSize = 1;
  set.width = kBytes;
  set.height = 1;
  cudaGraphNode_t memset_node = nullptr;
  CHECK(cudaGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &set));
  cudaKernelNodeParams kernel = {};
  kernel.func = (void*)bump;
  kernel.gridDim = dim3(1);
  kernel.blockDim = dim3(kThreads);
  kernel.kernelParams = args.argv;
  cudaGraphNode_t kernel_node = nullptr;
  CHECK(cudaGraphAddKernelNode(&kernel_node, graph, &memset_node, 1, &kernel));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));

  CHECK(cudaFree(args.data));
  CHECK(cudaGraphLaunch(exec, stream));  // expect: replay-after-free
  CHECK(cudaStreamSynchronize(stream));  // expect: graph-replay-failed
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return 0;
}
