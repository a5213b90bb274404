// unjoined-fork: a second stream is forked into the capture through an event but never joined
// back. EndCapture on the origin returns 904 (cudaErrorStreamCaptureUnjoined) and a NULL graph.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  BumpArgs side_args(device_buffer());
  warm_up(args);
  cudaStream_t origin = non_blocking_stream();
  cudaStream_t side = non_blocking_stream();
  cudaEvent_t fork = plain_event();

  CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, origin);
  CHECK(cudaEventRecord(fork, origin));
  CHECK(cudaStreamWaitEvent(side, fork, 0));
  LAUNCH_BUMP(side_args, side);
  LAUNCH_BUMP(args, origin);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(origin, &graph));  // expect: unjoined-fork
  discard(graph);
  return 0;
}
