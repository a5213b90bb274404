// uncaptured-event-wait: the capturing stream waits on an event recorded eagerly, outside any
// capture, without cudaEventWaitExternal: 905 (cudaErrorStreamCaptureIsolation), invalidated.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  BumpArgs producer_args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  cudaStream_t producer = non_blocking_stream();
  cudaEvent_t ready = plain_event();
  LAUNCH_BUMP(producer_args, producer);
  CHECK(cudaEventRecord(ready, producer));
  CHECK(cudaStreamSynchronize(producer));

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  CHECK(cudaStreamWaitEvent(stream, ready, 0));  // expect: uncaptured-event-wait
  LAUNCH_BUMP(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  discard(graph);
  return 0;
}
