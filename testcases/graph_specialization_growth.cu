// graph-specialization-growth: a server that captures a graph lazily, the first time a batch size
// arrives, while it is already replaying the sizes it has seen (lazy capture, vllm RFC#20098, without
// a fixed list; CUDA graph trees recording one graph per distinct input size). 12 distinct sizes
// come in over the run, each new one after replays of earlier ones: the capture site keeps producing
// specializations while serving. The fix: pad to a few bucket sizes, or capture them up front
// (graph_specialization_growth_ok).
#include <map>
#include <vector>

#include "graph_sizes.h"

// The arriving batches: a new size every fourth request, known sizes replayed in between.
static std::vector<int> requests() {
  const int distinct[12] = {3, 17, 5, 40, 9, 64, 22, 11, 96, 33, 7, 128};
  std::vector<int> arriving;
  for (int i = 0; i < 12; ++i) {
    arriving.push_back(distinct[i]);
    for (int j = 0; j < 3; ++j) arriving.push_back(distinct[(i * 5 + j) % (i + 1)]);
  }
  return arriving;
}

static cudaGraphExec_t capture_size(float* data, int size, cudaStream_t stream) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  QUIET(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));  // expect: graph-specialization-growth
  QUIET(launch_rows((const void*)scale_rows, data, size, stream));
  QUIET(cudaStreamEndCapture(stream, &graph));
  QUIET(cudaGraphInstantiate(&exec, graph, 0));
  QUIET(cudaGraphDestroy(graph));
  return exec;
}

int main() {
  float* data = row_buffer();
  warm_up_rows(data);
  cudaStream_t stream = non_blocking_stream();
  std::map<int, cudaGraphExec_t> graphs;  // batch size -> exec, captured on first sight
  int replays = 0;
  for (int size : requests()) {
    auto found = graphs.find(size);
    if (found == graphs.end()) found = graphs.emplace(size, capture_size(data, size, stream)).first;
    QUIET(cudaGraphLaunch(found->second, stream));
    QUIET(cudaStreamSynchronize(stream));
    ++replays;
  }
  std::printf("%d requests, %zu batch sizes captured\n", replays, graphs.size());
  for (auto& entry : graphs) QUIET(cudaGraphExecDestroy(entry.second));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(data));
  return 0;
}
