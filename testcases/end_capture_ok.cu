// Twin of end_capture_wrong_stream, end_capture_not_capturing and end_capture_double_begin: one
// BeginCapture, the fork joined back, EndCapture once on the origin stream, guarded by
// cudaStreamIsCapturing.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  BumpArgs side_args(device_buffer());
  warm_up(args);
  cudaStream_t origin = non_blocking_stream();
  cudaStream_t side = non_blocking_stream();
  cudaEvent_t fork = plain_event();
  cudaEvent_t join = plain_event();

  CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, origin);
  CHECK(cudaEventRecord(fork, origin));
  CHECK(cudaStreamWaitEvent(side, fork, 0));
  LAUNCH_BUMP(side_args, side);
  CHECK(cudaEventRecord(join, side));
  CHECK(cudaStreamWaitEvent(origin, join, 0));
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CHECK(cudaStreamIsCapturing(origin, &status));
  if (status == cudaStreamCaptureStatusActive) {
    cudaGraph_t graph = nullptr;
    CHECK(cudaStreamEndCapture(origin, &graph));
    replay(graph, origin);
  }
  return 0;
}
