// relaxed-mode-unsafe-call (note): cudaMalloc during a Relaxed capture succeeds, but only because
// of Relaxed mode; the same code under a Global capture would be rejected with 900.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
  LAUNCH_BUMP(args, stream);
  void* scratch = nullptr;
  CHECK(cudaMalloc(&scratch, 1 << 20));  // expect: relaxed-mode-unsafe-call
  LAUNCH_BUMP(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  CHECK(cudaFree(scratch));
  return 0;
}
