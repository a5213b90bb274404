// The program dies of a segfault right after its mistake (a cudaMalloc during a Global capture,
// 900). The trace must survive SIGSEGV and the finding must still name the cudaMalloc.
#include <csignal>

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
  std::raise(SIGSEGV);  // what a stray pointer would do next, without undefined behaviour
  return 0;
}
