// Capture rehearsal: the region "step" allocates a workspace the first time it runs
// (what cuBLAS and cuDNN do on their first call), later executions only launch. Rehearsed in global
// mode, the allocation would invalidate a capture (900), but only the first execution makes it: the
// region is capturable after 1 warm-up execution.
// capguard-args: --rehearse step
// expect-rehearsal: step capturable_after_warmup 1
#include <nvtx3/nvToolsExt.h>

#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  int* workspace = nullptr;
  for (int i = 0; i < 3; ++i) {
    nvtxRangePushA("step");
    if (workspace == nullptr) CHECK(cudaMalloc(&workspace, 1 << 20));  // expect: unsafe-call-during-capture
    LAUNCH_BUMP(args, stream);
    nvtxRangePop();
  }
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaFree(workspace));
  return 0;
}
