// A bandwidth benchmark's sweep over message sizes (nccl-tests -G, issue 47): for each of 12
// sizes, capture that size's kernel, instantiate, replay 3 times, destroy, next size; each size
// also captures an empty graph (a rank with nothing to enqueue), replays it once and destroys it.
// One size's graph lives at a time, so this is no specialization growth; the empty graph replays
// nothing, so re-capturing it is no churn worth a warning. Nothing is reported.
#include "graph_sizes.h"

static void capture_and_run(float* data, int size, cudaStream_t stream, int replays) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  QUIET(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  if (size > 0) QUIET(launch_rows((const void*)scale_rows, data, size, stream));
  QUIET(cudaStreamEndCapture(stream, &graph));
  QUIET(cudaGraphInstantiate(&exec, graph, 0));
  QUIET(cudaGraphDestroy(graph));
  for (int i = 0; i < replays; ++i) QUIET(cudaGraphLaunch(exec, stream));
  QUIET(cudaStreamSynchronize(stream));
  QUIET(cudaGraphExecDestroy(exec));
}

int main() {
  float* data = row_buffer();
  warm_up_rows(data);
  cudaStream_t stream = non_blocking_stream();
  for (int size = 1; size <= 512; size *= 2) {
    capture_and_run(data, size, stream, 3);  // this size's graph, destroyed before the next
    capture_and_run(data, 0, stream, 1);     // the empty graph of this iteration
  }
  for (int size : {3, 5, 7}) capture_and_run(data, size, stream, 3);
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(data));
  return 0;
}
