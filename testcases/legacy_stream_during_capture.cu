// legacy-stream-during-capture: a kernel on the legacy NULL stream while a *blocking* stream
// captures. The legacy stream would have to wait for the capturing stream, which CUDA refuses:
// 906 (cudaErrorStreamCaptureImplicit), capture invalidated, EndCapture returns 901.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreate(&stream));  // blocking: synchronizes with the legacy stream

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  LAUNCH_BUMP(args, nullptr);  // expect: legacy-stream-during-capture
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  discard(graph);
  return 0;
}
