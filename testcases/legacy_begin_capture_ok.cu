// Twin of legacy_begin_capture: the per-thread default stream (cudaStreamPerThread, handle 0x2)
// can be captured, unlike the legacy one (0 or 0x1).
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);

  CHECK(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, cudaStreamPerThread);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(cudaStreamPerThread, &graph));
  replay(graph, cudaStreamPerThread);
  return 0;
}
