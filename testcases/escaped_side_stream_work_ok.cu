// Twin of escaped_side_stream_work: the side stream is forked into the capture with an event and
// joined back, so its kernel is a node of the graph.
#include "common.h"

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
  CHECK(cudaEventRecord(join, side));
  CHECK(cudaStreamWaitEvent(stream, join, 0));
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  return 0;
}
