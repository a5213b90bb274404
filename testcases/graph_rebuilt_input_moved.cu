// graph-rebuilt-every-step where only an input address changes: each step's input lives in another
// buffer (the step cycles through three, as a framework that rebinds a static input instead of
// copying into it), so the program captures the same kernel again on the new address, instantiates
// it, launches the exec once and destroys it: 30 rebuilds of one key (CUDA graph trees' "static
// input data pointer changed" re-recording). The fix is cudaGraphExecUpdate, or a copy into one
// static input (graph_exec_update_ok).
#include "graph_sizes.h"

constexpr int kBatch = 64;
constexpr int kSteps = 30;

int main() {
  float* output = row_buffer();
  float* inputs[3] = {row_buffer(), row_buffer(), row_buffer()};
  warm_up_rows(output);
  cudaStream_t stream = non_blocking_stream();
  for (int step = 0; step < kSteps; ++step) {
    const float* input = inputs[step % 3];  // this step's batch, at another address than the last
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    QUIET(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));  // expect: graph-rebuilt-every-step
    QUIET(launch_accumulate(output, input, kBatch, stream));
    QUIET(cudaStreamEndCapture(stream, &graph));
    QUIET(cudaGraphInstantiate(&exec, graph, 0));
    QUIET(cudaGraphLaunch(exec, stream));
    QUIET(cudaStreamSynchronize(stream));
    QUIET(cudaGraphExecDestroy(exec));
    QUIET(cudaGraphDestroy(graph));
  }
  CHECK(cudaDeviceSynchronize());
  for (float* input : inputs) CHECK(cudaFree(input));
  CHECK(cudaFree(output));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
