// The program dies right after its mistake: a cudaMalloc during a Global capture (900), then the
// usual "check and abort" on the failed EndCapture. The trace must survive abort() and the
// finding must still name the cudaMalloc.
#include <cstdlib>

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
  if (CHECK(cudaStreamEndCapture(stream, &graph)) != cudaSuccess) {
    std::fprintf(stderr, "fatal: capture failed, aborting\n");
    std::abort();
  }
  replay(graph, stream);
  return 0;
}
