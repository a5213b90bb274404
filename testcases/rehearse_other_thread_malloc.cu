// Capture rehearsal: while the main thread runs the region "step" (rehearsed in global
// mode), another thread allocates. A global-mode capture prohibits that call from any thread (900
// on the other thread, the capture invalidated): the other thread's cudaMalloc is the finding.
// capguard-args: --rehearse step
// expect-rehearsal: step not_capturable
#include <nvtx3/nvToolsExt.h>

#include <thread>

#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  int* other = nullptr;
  nvtxRangePushA("step");
  LAUNCH_BUMP(args, stream);
  std::thread([&] { CHECK(cudaMalloc(&other, 1 << 20)); }).join();  // expect: unsafe-call-during-capture
  LAUNCH_BUMP(args, stream);
  nvtxRangePop();
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaFree(other));
  return 0;
}
