// captured-event-query: querying an event that was recorded inside the capture.
// cudaEventQuery returns 907 (cudaErrorCapturedEvent) and the capture is invalidated;
// EndCapture returns 901.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  cudaEvent_t done = plain_event();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  CHECK(cudaEventRecord(done, stream));
  CHECK(cudaEventQuery(done));  // expect: captured-event-query
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  discard(graph);
  return 0;
}
