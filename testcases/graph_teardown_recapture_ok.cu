// Correct twin (no finding expected): an RL engine's sleep/wake cycle (vLLM or SGLang colocated
// with training, vllm#45648, trl#3968). The 51 vLLM batch sizes are captured in a burst and some
// replayed; on sleep every exec is destroyed in one batch, with no capture in between; on wake the
// whole set is captured again. Three teardowns, four captures of the same set from one site: a
// deliberate teardown, not churn.
#include <vector>

#include "graph_sizes.h"

struct SizeGraph {
  int size = 0;
  cudaGraphExec_t exec = nullptr;
};

// Wake: every batch size captured and instantiated, largest first (the graph is kept only as the
// exec, as torch.cuda.CUDAGraph does).
static std::vector<SizeGraph> capture_all(float* data, cudaStream_t stream) {
  std::vector<SizeGraph> set;
  for (int size : vllm_capture_sizes()) {
    SizeGraph captured;
    captured.size = size;
    cudaGraph_t graph = nullptr;
    QUIET(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    QUIET(launch_rows((const void*)scale_rows, data, size, stream));
    QUIET(cudaStreamEndCapture(stream, &graph));
    QUIET(cudaGraphInstantiate(&captured.exec, graph, 0));
    QUIET(cudaGraphDestroy(graph));
    set.push_back(captured);
  }
  return set;
}

// Rollouts: a handful of sizes, each replayed a few times.
static void serve(const std::vector<SizeGraph>& set, int round, cudaStream_t stream) {
  for (int step = 0; step < 6; ++step) {
    const SizeGraph& chosen = set[(round * 7 + step * 13) % set.size()];
    QUIET(cudaGraphLaunch(chosen.exec, stream));
  }
  CHECK(cudaStreamSynchronize(stream));
}

// Sleep: every exec destroyed together (the engine frees its graphs and their pool).
static void teardown(std::vector<SizeGraph>& set) {
  for (SizeGraph& captured : set) QUIET(cudaGraphExecDestroy(captured.exec));
  set.clear();
}

int main() {
  float* data = row_buffer();
  warm_up_rows(data);
  cudaStream_t stream = non_blocking_stream();

  const int kTeardowns = 3;
  for (int round = 0; round <= kTeardowns; ++round) {
    std::vector<SizeGraph> set = capture_all(data, stream);
    std::printf("round %d: %zu batch sizes captured\n", round, set.size());
    serve(set, round, stream);
    teardown(set);  // the last one is the exit
  }
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(data));
  return 0;
}
