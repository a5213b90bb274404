// One capture across two GPUs, done right: a Global capture on a GPU 0 stream forks a stream of
// GPU 1 in with an event, GPU 1 runs a kernel in the capture, and its work is joined back before
// EndCapture. Each event is created on the device of the stream it is recorded on (waiting
// across devices is allowed; recording is not: see two_device_join_event_wrong_device). The
// graph holds nodes of both devices. capguard must report nothing.
#include "multi/two_devices.h"

int main() {
  require_two_devices();
  int* data1 = warm_buffer_on(1);
  cudaStream_t side = non_blocking_stream();  // on GPU 1
  cudaEvent_t join = plain_event();           // on GPU 1, recorded on side
  int* data0 = warm_buffer_on(0);
  cudaStream_t origin = non_blocking_stream();  // on GPU 0
  cudaEvent_t fork = plain_event();             // on GPU 0, recorded on origin
  BumpArgs args0(data0), args1(data1);

  CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args0, origin);
  CHECK(cudaEventRecord(fork, origin));
  CHECK(cudaSetDevice(1));
  CHECK(cudaStreamWaitEvent(side, fork, 0));
  LAUNCH_BUMP(args1, side);
  CHECK(cudaEventRecord(join, side));
  CHECK(cudaSetDevice(0));
  CHECK(cudaStreamWaitEvent(origin, join, 0));
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(origin, &graph));
  replay(graph, origin);
  CHECK(cudaFree(data0));
  CHECK(cudaSetDevice(1));
  CHECK(cudaFree(data1));
  return 0;
}
