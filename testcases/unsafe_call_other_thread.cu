// unsafe-call-during-capture from another thread: while the main thread captures in Global mode,
// a second thread allocates. Its cudaMalloc returns 900 and the main thread's capture is
// invalidated; the main thread only sees 901 at EndCapture.
#include <thread>

#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  std::thread telemetry([] {
    void* scratch = nullptr;
    CHECK(cudaMalloc(&scratch, 1 << 20));  // expect: unsafe-call-during-capture
  });
  telemetry.join();
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  discard(graph);
  return 0;
}
