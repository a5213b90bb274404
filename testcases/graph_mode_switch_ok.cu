// Correct twin (no finding expected): SGLang's mode switch. Every batch size (vLLM's 51) is
// captured at start-up and some are replayed; when a request first needs hidden states, every size
// is captured once more in the richer mode (one extra kernel node per graph), in one burst, from the
// same capture site, and only then is the old set dropped; serving replays the new graphs. 51 new
// keys appear after replays, but in a burst: a mode switch, not specialization growth.
#include <vector>

#include "graph_sizes.h"

enum class Mode { Plain, WithHiddenStates };

struct SizeGraph {
  int size = 0;
  cudaGraphExec_t exec = nullptr;
};

static std::vector<SizeGraph> capture_all(float* data, Mode mode, cudaStream_t stream) {
  std::vector<SizeGraph> set;
  for (int size : vllm_capture_sizes()) {
    SizeGraph captured;
    captured.size = size;
    cudaGraph_t graph = nullptr;
    QUIET(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    QUIET(launch_rows((const void*)scale_rows, data, size, stream));
    if (mode == Mode::WithHiddenStates) QUIET(launch_rows((const void*)add_rows, data, size, stream));
    QUIET(cudaStreamEndCapture(stream, &graph));
    QUIET(cudaGraphInstantiate(&captured.exec, graph, 0));
    QUIET(cudaGraphDestroy(graph));
    set.push_back(captured);
  }
  return set;
}

static void serve(const std::vector<SizeGraph>& set, cudaStream_t stream) {
  for (int step = 0; step < 8; ++step) QUIET(cudaGraphLaunch(set[(step * 11) % set.size()].exec, stream));
  CHECK(cudaStreamSynchronize(stream));
}

static void drop(std::vector<SizeGraph>& set) {
  for (SizeGraph& captured : set) QUIET(cudaGraphExecDestroy(captured.exec));
  set.clear();
}

int main() {
  float* data = row_buffer();
  warm_up_rows(data);
  cudaStream_t stream = non_blocking_stream();

  // One call site for both modes: the richer set comes from the same capture site as the first.
  std::vector<SizeGraph> current;
  for (Mode mode : {Mode::Plain, Mode::WithHiddenStates}) {
    std::vector<SizeGraph> fresh = capture_all(data, mode, stream);
    drop(current);  // the old mode's graphs go once the new set exists
    current = fresh;
    std::printf("mode %d: %zu batch sizes captured\n", static_cast<int>(mode), current.size());
    serve(current, stream);
  }
  drop(current);
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(data));
  return 0;
}
