// unsafe-call-during-capture: cudaMalloc while this thread captures in Global mode.
// CUDA rejects it (900) and invalidates the capture; EndCapture returns 901.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  void* scratch = nullptr;
  CHECK(cudaMalloc(&scratch, 1 << 20));  // expect: unsafe-call-during-capture
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  discard(graph);
  return 0;
}
