// Capture rehearsal, the twin of rehearse_unjoined_fork: the region's stream waits for
// an event recorded after the side stream's work, so the fork is joined and every execution is
// capturable as it is.
// capguard-args: --rehearse step
// expect-rehearsal: step capturable
#include <nvtx3/nvToolsExt.h>

#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  BumpArgs side_args(device_buffer());
  warm_up(args);
  cudaStream_t origin = non_blocking_stream();
  cudaStream_t side = non_blocking_stream();
  cudaEvent_t fork = plain_event();
  cudaEvent_t join = plain_event();
  for (int i = 0; i < 2; ++i) {
    nvtxRangePushA("step");
    LAUNCH_BUMP(args, origin);
    CHECK(cudaEventRecord(fork, origin));
    CHECK(cudaStreamWaitEvent(side, fork, 0));
    LAUNCH_BUMP(side_args, side);
    CHECK(cudaEventRecord(join, side));
    CHECK(cudaStreamWaitEvent(origin, join, 0));
    LAUNCH_BUMP(args, origin);
    nvtxRangePop();
  }
  CHECK(cudaDeviceSynchronize());
  return 0;
}
