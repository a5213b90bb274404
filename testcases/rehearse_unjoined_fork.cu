// Capture rehearsal: the region "step" forks a side stream (an event recorded on the
// region's stream, waited on by the side stream) and never joins it back. Eagerly nothing fails;
// captured, cudaStreamEndCapture would return cudaErrorStreamCaptureUnjoined (904). The finding
// names the side stream's last work. Every execution forks without joining: not capturable.
// capguard-args: --rehearse step
// expect-rehearsal: step not_capturable
#include <nvtx3/nvToolsExt.h>

#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  BumpArgs side_args(device_buffer());
  warm_up(args);
  cudaStream_t origin = non_blocking_stream();
  cudaStream_t side = non_blocking_stream();
  cudaEvent_t fork = plain_event();
  for (int i = 0; i < 2; ++i) {
    nvtxRangePushA("step");
    LAUNCH_BUMP(args, origin);
    CHECK(cudaEventRecord(fork, origin));
    CHECK(cudaStreamWaitEvent(side, fork, 0));
    LAUNCH_BUMP(side_args, side);  // expect: unjoined-fork
    LAUNCH_BUMP(args, origin);
    nvtxRangePop();
  }
  CHECK(cudaDeviceSynchronize());
  return 0;
}
