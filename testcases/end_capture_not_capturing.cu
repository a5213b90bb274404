// end-capture-misuse: the capture is ended twice. The second EndCapture finds a stream that is not
// capturing: 401 (cudaErrorIllegalState). The graph from the first one is fine.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraph_t again = nullptr;
  CHECK(cudaStreamEndCapture(stream, &again));  // expect: end-capture-misuse
  discard(again);
  replay(graph, stream);
  return 0;
}
