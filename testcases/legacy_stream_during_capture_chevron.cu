// legacy-stream-during-capture, launched with <<<>>>: same mistake as
// legacy_stream_during_capture, but the launch goes through nvcc's generated stub
// (__device_stub__...) and the kernel's host wrapper before cudaLaunchKernel. The report must
// still point at the launch line, not at the stub or at the kernel's definition.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreate(&stream));

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  bump<<<1, kThreads>>>(args.data);  // expect: legacy-stream-during-capture
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  discard(graph);
  return 0;
}
