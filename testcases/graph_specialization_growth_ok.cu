// Correct twin of graph_specialization_growth (no finding expected): the same 12 batch sizes are
// captured up front, in one burst before serving (as vLLM and SGLang capture their list at
// start-up), then the same requests arrive and every one is a replay.
#include <map>
#include <vector>

#include "graph_sizes.h"

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
  QUIET(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
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
  std::map<int, cudaGraphExec_t> graphs;  // batch size -> exec, all captured before serving
  for (int size : {128, 96, 64, 40, 33, 22, 17, 11, 9, 7, 5, 3}) graphs[size] = capture_size(data, size, stream);
  int replays = 0;
  for (int size : requests()) {
    QUIET(cudaGraphLaunch(graphs.at(size), stream));
    QUIET(cudaStreamSynchronize(stream));
    ++replays;
  }
  std::printf("%d requests, %zu batch sizes captured\n", replays, graphs.size());
  for (auto& entry : graphs) QUIET(cudaGraphExecDestroy(entry.second));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(data));
  return 0;
}
