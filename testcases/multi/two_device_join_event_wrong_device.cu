// A capture across two GPUs whose join is written but cannot happen: the join event was created
// on GPU 0, and an event can be recorded only on a stream of its own device, so
// cudaEventRecord(join, side) returns cudaErrorInvalidResourceHandle (400). The origin's wait
// on the never-recorded event succeeds and joins nothing; EndCapture returns 904. capguard
// reports the unjoined fork and names the failed record. Twin: two_device_fork_ok.
#include "multi/two_devices.h"

int main() {
  require_two_devices();
  int* data1 = warm_buffer_on(1);
  cudaStream_t side = non_blocking_stream();  // on GPU 1
  int* data0 = warm_buffer_on(0);
  cudaStream_t origin = non_blocking_stream();  // on GPU 0
  cudaEvent_t fork = plain_event(), join = plain_event();  // both on GPU 0
  BumpArgs args0(data0), args1(data1);

  CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args0, origin);
  CHECK(cudaEventRecord(fork, origin));
  CHECK(cudaSetDevice(1));
  CHECK(cudaStreamWaitEvent(side, fork, 0));
  LAUNCH_BUMP(args1, side);
  CHECK(cudaEventRecord(join, side));  // 400: join belongs to GPU 0
  CHECK(cudaSetDevice(0));
  CHECK(cudaStreamWaitEvent(origin, join, 0));
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(origin, &graph));  // expect: unjoined-fork
  discard(graph);
  CHECK(cudaFree(data0));
  CHECK(cudaSetDevice(1));
  CHECK(cudaFree(data1));
  return 0;
}
