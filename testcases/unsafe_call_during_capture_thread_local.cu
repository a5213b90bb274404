// unsafe-call-during-capture: ThreadLocal mode does not allow the capturing thread itself to
// allocate; only Relaxed does. cudaMalloc returns 900 and the capture is invalidated.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  LAUNCH_BUMP(args, stream);
  void* scratch = nullptr;
  CHECK(cudaMalloc(&scratch, 1 << 20));  // expect: unsafe-call-during-capture
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  discard(graph);
  return 0;
}
