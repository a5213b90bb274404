// One culprit, many consequences: a helper synchronizes the capturing stream (900); every later
// call on the capture's streams returns 901 (cudaErrorStreamCaptureInvalidated), and so does
// EndCapture. Only the culprit is a finding; the 901s are folded under it as consequences.
#include "common.h"

// Looks harmless where it is called; deep in a real program it would be a logging hook.
static void flush_metrics(cudaStream_t stream) {
  CHECK(cudaStreamSynchronize(stream));  // expect: sync-during-capture
}

int main() {
  BumpArgs args(device_buffer());
  BumpArgs side_args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  cudaStream_t side = non_blocking_stream();
  cudaEvent_t fork = plain_event();
  cudaEvent_t join = plain_event();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  CHECK(cudaEventRecord(fork, stream));
  CHECK(cudaStreamWaitEvent(side, fork, 0));
  LAUNCH_BUMP(side_args, side);
  flush_metrics(stream);
  LAUNCH_BUMP(args, stream);
  CHECK(cudaMemsetAsync(args.data, 0, kBytes, stream));
  LAUNCH_BUMP(side_args, side);
  CHECK(cudaEventRecord(join, side));
  CHECK(cudaStreamWaitEvent(stream, join, 0));
  LAUNCH_BUMP(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  discard(graph);
  return 0;
}
