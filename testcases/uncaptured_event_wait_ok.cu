// Twin of uncaptured_event_wait: cudaEventWaitExternal turns the wait into an event-wait node of
// the graph, which waits for the event's latest record each time the graph runs.
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
  CHECK(cudaStreamWaitEvent(stream, ready, cudaEventWaitExternal));
  LAUNCH_BUMP(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  return 0;
}
