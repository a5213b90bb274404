// Capture rehearsal: a region marked with an NVTX range "step", run eagerly three times,
// synchronizes its own stream every time. Nothing is captured, so CUDA answers success; rehearsed
// in global mode, the synchronize would invalidate a capture of the region (900): one finding for
// the three executions, and the region is not capturable.
// capguard-args: --rehearse step
// expect-rehearsal: step not_capturable
#include <nvtx3/nvToolsExt.h>

#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  for (int i = 0; i < 3; ++i) {
    nvtxRangePushA("step");
    LAUNCH_BUMP(args, stream);
    CHECK(cudaStreamSynchronize(stream));  // expect: sync-during-capture
    LAUNCH_BUMP(args, stream);
    nvtxRangePop();
  }
  CHECK(cudaStreamSynchronize(stream));
  return 0;
}
