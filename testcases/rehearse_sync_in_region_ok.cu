// Capture rehearsal, the twin of rehearse_sync_in_region: the synchronize comes after the
// NVTX range "step" closes, so every execution of the region is capturable as it is.
// capguard-args: --rehearse step
// expect-rehearsal: step capturable
#include <nvtx3/nvToolsExt.h>

#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  for (int i = 0; i < 3; ++i) {
    nvtxRangePushA("step");
    LAUNCH_BUMP(args, stream);
    LAUNCH_BUMP(args, stream);
    nvtxRangePop();
    CHECK(cudaStreamSynchronize(stream));
  }
  return 0;
}
