// cross-capture-event-wait: two independent captures on one thread; the second waits on an event
// recorded inside the first. CUDA cannot merge captures: 902 (cudaErrorStreamCaptureMerge), and
// *both* captures are invalidated (both EndCapture calls return 901).
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  BumpArgs second_args(device_buffer());
  warm_up(args);
  cudaStream_t first = non_blocking_stream();
  cudaStream_t second = non_blocking_stream();
  cudaEvent_t produced = plain_event();

  CHECK(cudaStreamBeginCapture(first, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, first);
  CHECK(cudaEventRecord(produced, first));
  CHECK(cudaStreamBeginCapture(second, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(second_args, second);
  CHECK(cudaStreamWaitEvent(second, produced, 0));  // expect: cross-capture-event-wait
  LAUNCH_BUMP(second_args, second);
  cudaGraph_t second_graph = nullptr;
  CHECK(cudaStreamEndCapture(second, &second_graph));
  cudaGraph_t first_graph = nullptr;
  CHECK(cudaStreamEndCapture(first, &first_graph));
  discard(second_graph);
  discard(first_graph);
  return 0;
}
