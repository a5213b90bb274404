// legacy-stream-during-capture: capturing the legacy NULL stream is not possible.
// cudaStreamBeginCapture(0, ...) returns 900 and no capture starts.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);

  cudaError_t began = cudaErrorUnknown;
  began = CHECK(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal));  // expect: legacy-stream-during-capture
  if (began == cudaSuccess) {
    LAUNCH_BUMP(args, nullptr);
    cudaGraph_t graph = nullptr;
    CHECK(cudaStreamEndCapture(0, &graph));
    discard(graph);
  }
  return 0;
}
