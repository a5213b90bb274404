// Correct twin (no finding expected): an inference server's start-up, the way vLLM does it. One
// graph per batch size of vLLM's default list (51 sizes: 1, 2, 4, 8..248 step 8, 256..512 step 16),
// captured largest first in one burst, every exec kept alive; then serving replays a few of the
// sizes a few times (most sizes are never replayed at this load), and everything is destroyed at
// exit. 51 specializations of one capture site, none of them churn or growth.
#include <map>

#include "graph_sizes.h"

struct SizeGraph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

// One batch size: the model step (a kernel over `size` rows) captured and instantiated.
static SizeGraph capture_size(float* data, int size, cudaStream_t stream) {
  SizeGraph captured;
  QUIET(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  QUIET(launch_rows((const void*)scale_rows, data, size, stream));
  QUIET(cudaStreamEndCapture(stream, &captured.graph));
  QUIET(cudaGraphInstantiate(&captured.exec, captured.graph, 0));
  return captured;
}

int main() {
  float* data = row_buffer();
  warm_up_rows(data);
  cudaStream_t stream = non_blocking_stream();

  std::map<int, SizeGraph> graphs;  // batch size -> its graph, alive until exit
  for (int size : vllm_capture_sizes()) graphs[size] = capture_size(data, size, stream);
  std::printf("captured %zu batch sizes\n", graphs.size());

  // Serving: a few batch sizes come up, each padded to a captured size and replayed.
  const int served[] = {1, 8, 64, 1, 8, 512, 64, 8};
  for (int size : served) QUIET(cudaGraphLaunch(graphs.at(size).exec, stream));
  CHECK(cudaStreamSynchronize(stream));

  for (auto& entry : graphs) {
    QUIET(cudaGraphExecDestroy(entry.second.exec));
    QUIET(cudaGraphDestroy(entry.second.graph));
  }
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(data));
  return 0;
}
