// Twin of cross_capture_event_wait: the second stream does not begin a capture of its own; waiting
// on the event forks it into the first capture, and it is joined back before EndCapture.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  BumpArgs second_args(device_buffer());
  warm_up(args);
  cudaStream_t first = non_blocking_stream();
  cudaStream_t second = non_blocking_stream();
  cudaEvent_t produced = plain_event();
  cudaEvent_t consumed = plain_event();

  CHECK(cudaStreamBeginCapture(first, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, first);
  CHECK(cudaEventRecord(produced, first));
  CHECK(cudaStreamWaitEvent(second, produced, 0));
  LAUNCH_BUMP(second_args, second);
  CHECK(cudaEventRecord(consumed, second));
  CHECK(cudaStreamWaitEvent(first, consumed, 0));
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(first, &graph));
  replay(graph, first);
  return 0;
}
