// A bandwidth benchmark's sweep over message sizes (nccl-tests -G): for each of 13
// sizes, capture that size's kernel, instantiate, replay 3 times, destroy, next size; after each
// size the benchmark also captures an empty graph at its own site (a rank with nothing to
// enqueue), replays it once and destroys it. One size's graph lives at a time, so this is no
// specialization growth; the empty graph replays nothing, so re-capturing it is no churn worth a
// warning. Nothing is reported (capguard used to report both).
#include "graph_sizes.h"

static void run_size(float* data, int size, cudaStream_t stream) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  QUIET(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  QUIET(launch_rows((const void*)scale_rows, data, size, stream));
  QUIET(cudaStreamEndCapture(stream, &graph));
  QUIET(cudaGraphInstantiate(&exec, graph, 0));
  QUIET(cudaGraphDestroy(graph));
  for (int i = 0; i < 3; ++i) QUIET(cudaGraphLaunch(exec, stream));
  QUIET(cudaStreamSynchronize(stream));
  QUIET(cudaGraphExecDestroy(exec));
}

static void run_empty(cudaStream_t stream) {
  cudaGraph_t empty = nullptr;
  cudaGraphExec_t empty_exec = nullptr;
  QUIET(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));  // nothing enqueued
  QUIET(cudaStreamEndCapture(stream, &empty));
  QUIET(cudaGraphInstantiate(&empty_exec, empty, 0));
  QUIET(cudaGraphDestroy(empty));
  QUIET(cudaGraphLaunch(empty_exec, stream));
  QUIET(cudaStreamSynchronize(stream));
  QUIET(cudaGraphExecDestroy(empty_exec));
}

int main() {
  float* data = row_buffer();
  warm_up_rows(data);
  cudaStream_t stream = non_blocking_stream();
  for (int size : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 3, 5, 7}) {
    run_size(data, size, stream);  // this size's graph, destroyed before the next
    run_empty(stream);
  }
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(data));
  return 0;
}
