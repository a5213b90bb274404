// end-capture-misuse: BeginCapture on a stream that is already capturing: 401
// (cudaErrorIllegalState). The first capture goes on and ends normally.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));  // expect: end-capture-misuse
  LAUNCH_BUMP(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  return 0;
}
