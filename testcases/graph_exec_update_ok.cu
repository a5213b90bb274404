// Correct twin of graph_rebuilt_input_moved (no finding expected): the same 30 steps, each input at
// another address, but the exec is instantiated once; every later step captures the kernel on the
// new address and hands the graph to cudaGraphExecUpdate (only an argument changed, so the update
// succeeds), destroys the graph and launches the updated exec: llama.cpp's per-token update.
#include "graph_sizes.h"

constexpr int kBatch = 64;
constexpr int kSteps = 30;

int main() {
  float* output = row_buffer();
  float* inputs[3] = {row_buffer(), row_buffer(), row_buffer()};
  warm_up_rows(output);
  cudaStream_t stream = non_blocking_stream();
  cudaGraphExec_t exec = nullptr;
  int rejected = 0;
  for (int step = 0; step < kSteps; ++step) {
    const float* input = inputs[step % 3];
    cudaGraph_t graph = nullptr;
    QUIET(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    QUIET(launch_accumulate(output, input, kBatch, stream));
    QUIET(cudaStreamEndCapture(stream, &graph));
    if (exec == nullptr) {
      CHECK(cudaGraphInstantiate(&exec, graph, 0));
    } else {
      cudaGraphExecUpdateResultInfo info = {};
      if (QUIET(cudaGraphExecUpdate(exec, graph, &info)) != cudaSuccess) ++rejected;
    }
    QUIET(cudaGraphDestroy(graph));
    QUIET(cudaGraphLaunch(exec, stream));
    QUIET(cudaStreamSynchronize(stream));
  }
  std::printf("%d steps, %d updates rejected (0 expected)\n", kSteps, rejected);
  CHECK(cudaGraphExecDestroy(exec));
  for (float* input : inputs) CHECK(cudaFree(input));
  CHECK(cudaFree(output));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
