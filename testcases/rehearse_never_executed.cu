// Capture rehearsal: `--rehearse decode` names a region the program never runs (its
// only NVTX range is "prefill"). Nothing is rehearsed, and the CI gate must not pass as if the
// region had been checked: capguard warns and exits 3 (fails closed), like any check that did
// not happen.
// capguard-args: --rehearse decode
// expect-rehearsal: decode never_executed
#include <nvtx3/nvToolsExt.h>

#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  nvtxRangePushA("prefill");
  LAUNCH_BUMP(args, stream);
  nvtxRangePop();
  CHECK(cudaStreamSynchronize(stream));
  return 0;
}
