// Twin of graph_replay_after_free: the exec's kernel node is pointed at a new buffer with
// cudaGraphExecKernelNodeSetParams before the old buffer is freed, so every replay writes live
// memory (the fix replay-after-free suggests). capguard must report nothing.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  BumpArgs moved(device_buffer());
  cudaStream_t stream = non_blocking_stream();
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));

  cudaGraphNode_t node = nullptr;
  size_t count = 1;
  CHECK(cudaGraphGetNodes(graph, &node, &count));
  cudaKernelNodeParams params{};
  CHECK(cudaGraphKernelNodeGetParams(node, &params));
  params.kernelParams = moved.argv;  // the same kernel, now writing `moved`
  CHECK(cudaGraphExecKernelNodeSetParams(exec, node, &params));
  CHECK(cudaFree(args.data));  // no longer the exec's
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  int host[kThreads] = {};
  CHECK(cudaMemcpy(host, moved.data, kBytes, cudaMemcpyDeviceToHost));
  std::printf("moved[0] after one replay: %d (1 when the node was re-pointed)\n", host[0]);
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return 0;
}
