// end-capture-misuse: EndCapture is called on the forked stream instead of the stream the capture
// began on: 903 (cudaErrorStreamCaptureUnmatched), capture invalidated; EndCapture on the origin
// then returns 901.
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
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(side, &graph));  // expect: end-capture-misuse
  discard(graph);
  graph = nullptr;
  CHECK(cudaStreamEndCapture(origin, &graph));
  discard(graph);
  return 0;
}
