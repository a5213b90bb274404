// Capture rehearsal: the region "step" is rehearsed eagerly twice (capturable), then
// captured for real, the NVTX range inside the capture, and replayed: the real capture is judged
// by the real rules (clean too), and the rehearsal adds nothing to it.
// capguard-args: --rehearse step
// expect-rehearsal: step capturable
#include <nvtx3/nvToolsExt.h>

#include "common.h"

void step(BumpArgs& args, cudaStream_t stream) {
  nvtxRangePushA("step");
  LAUNCH_BUMP(args, stream);
  LAUNCH_BUMP(args, stream);
  nvtxRangePop();
}

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  for (int i = 0; i < 2; ++i) step(args, stream);
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  step(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  if (graph != nullptr) replay(graph, stream);
  return 0;
}
