// The program leaves with _exit() right after its mistake (a cudaMalloc during a Global
// capture, 900): no atexit handlers, no flush, the capture still open. The trace must hold the
// finding anyway.
#include <unistd.h>

#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  void* scratch = nullptr;
  CHECK(cudaMalloc(&scratch, 1 << 20));  // expect: unsafe-call-during-capture
  std::fflush(stdout);
  _exit(0);
}
