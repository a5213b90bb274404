// unsupported-during-capture: the legacy cudaStreamAddCallback cannot be captured (its
// replacement, cudaLaunchHostFunc, can).
#include "common.h"

static void CUDART_CB report_progress(cudaStream_t, cudaError_t, void*) { std::puts("progress"); }

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  CHECK(cudaStreamAddCallback(stream, report_progress, nullptr, 0));  // expect: unsupported-during-capture
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  discard(graph);
  return 0;
}
