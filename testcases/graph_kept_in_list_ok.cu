// Correct twin (no finding expected): the same graph captured again and again, but every copy
// kept. Mirrors PyTorch's test_memory_stats_of_multiple_generators_and_graphs: batches of 1, then
// 3, then 10 graphs of one identical kernel are captured from one site, each replayed once right
// after its capture and kept in a list; each batch is destroyed together before the next begins.
// No exec is dropped while the next copy is captured, so this is not churn.
#include <vector>

#include "common.h"

static cudaGraphExec_t capture_one(BumpArgs& args, cudaStream_t stream) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphDestroy(graph));
  return exec;
}

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  for (int count : {1, 3, 10}) {
    std::vector<cudaGraphExec_t> graphs;
    for (int i = 0; i < count; ++i) {
      graphs.push_back(capture_one(args, stream));
      CHECK(cudaGraphLaunch(graphs.back(), stream));  // replayed once, right after its capture
    }
    CHECK(cudaStreamSynchronize(stream));
    std::printf("%d graphs alive\n", count);
    for (cudaGraphExec_t exec : graphs) CHECK(cudaGraphExecDestroy(exec));  // the list dropped together
  }
  int host[kThreads] = {};
  CHECK(cudaMemcpy(host, args.data, kBytes, cudaMemcpyDeviceToHost));
  std::printf("data[0] = %d (the warm-up and 14 replays: 15 expected)\n", host[0]);
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
