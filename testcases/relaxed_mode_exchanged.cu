// relaxed-mode-unsafe-call (note): the capture is Global, but the thread switches its own capture
// interaction mode to Relaxed with cudaThreadExchangeStreamCaptureMode around a cudaMalloc, which
// therefore succeeds. Under the Global mode it would have been rejected.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
  void* scratch = nullptr;
  CHECK(cudaMalloc(&scratch, 1 << 20));  // expect: relaxed-mode-unsafe-call
  CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
  LAUNCH_BUMP(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  CHECK(cudaFree(scratch));
  return 0;
}
