// Capture rehearsal: one region "step" holds three different mistakes, and one eager run
// reports all of them at once, where a real capture would stop at the first: a synchronize of the
// region's stream (would invalidate the capture), a synchronous device-to-host copy into pageable
// memory (on a non-blocking capturing stream it would run now and be missing from the graph) and
// a launch on the legacy stream (would run once, now, and be missing from the graph). Every
// execution synchronizes: not capturable.
// capguard-args: --rehearse step
// expect-rehearsal: step not_capturable
#include <nvtx3/nvToolsExt.h>

#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  int host[kThreads] = {};  // pageable
  for (int i = 0; i < 2; ++i) {
    nvtxRangePushA("step");
    LAUNCH_BUMP(args, stream);
    CHECK(cudaStreamSynchronize(stream));  // expect: sync-during-capture
    CHECK(cudaMemcpy(host, args.data, kBytes, cudaMemcpyDeviceToHost));  // expect: escaped-sync-copy
    LAUNCH_BUMP(args, nullptr);  // expect: escaped-legacy-work
    LAUNCH_BUMP(args, stream);
    nvtxRangePop();
  }
  CHECK(cudaDeviceSynchronize());
  std::printf("host[0] = %d\n", host[0]);
  return 0;
}
