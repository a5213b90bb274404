// replay-after-free after cudaGraphExecKernelNodeSetParams: the exec's first kernel node is
// pointed at a new buffer, but its second one still writes `second`, which is then freed and
// replayed. Re-pointing one node does not make the others' memory free to go.
// Twin: graph_exec_set_params_ok.
#include "common.h"

int main() {
  BumpArgs first(device_buffer());
  warm_up(first);
  int* big = nullptr;  // 1 MiB: it stays mapped once freed, so the replay corrupts silently
  CHECK(cudaMalloc(&big, 1 << 20));
  BumpArgs second(big);
  BumpArgs moved(device_buffer());
  cudaStream_t stream = non_blocking_stream();
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(first, stream);
  LAUNCH_BUMP(second, stream);
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));

  cudaGraphNode_t nodes[2] = {};
  size_t count = 2;
  CHECK(cudaGraphGetNodes(graph, nodes, &count));
  for (cudaGraphNode_t node : nodes) {  // the node that writes `first` gets `moved`
    cudaKernelNodeParams params{};
    CHECK(cudaGraphKernelNodeGetParams(node, &params));
    if (*static_cast<int**>(params.kernelParams[0]) != first.data) continue;
    params.kernelParams = moved.argv;
    CHECK(cudaGraphExecKernelNodeSetParams(exec, node, &params));
  }
  CHECK(cudaFree(first.data));           // fine: no node writes it any more
  CHECK(cudaFree(second.data));          // the second node still does
  CHECK(cudaGraphLaunch(exec, stream));  // expect: replay-after-free
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return 0;
}
