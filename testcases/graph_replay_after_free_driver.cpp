// replay-after-free through the driver API only (as JAX/XLA): a captured memset node holds a
// cuMemAlloc buffer; cuMemFree, a cuMemAlloc that gets the address back, then cuGraphLaunch.
#include "driver_common.h"

int main() {
  use_primary_context();
  CUdeviceptr buffer = 0;
  DRV_CHECK(cuMemAlloc(&buffer, 4 << 20));
  CUstream stream = driver_non_blocking_stream();
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;

  DRV_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  DRV_CHECK(cuMemsetD32Async(buffer, 7, kWords, stream));
  DRV_CHECK(cuStreamEndCapture(stream, &graph));
  DRV_CHECK(cuGraphInstantiate(&exec, graph, 0));
  DRV_CHECK(cuGraphLaunch(exec, stream));
  DRV_CHECK(cuStreamSynchronize(stream));

  DRV_CHECK(cuMemFree(buffer));
  CUdeviceptr other = 0;
  DRV_CHECK(cuMemAlloc(&other, 4 << 20));
  std::printf("freed %#llx, new allocation %#llx\n", static_cast<unsigned long long>(buffer),
              static_cast<unsigned long long>(other));
  DRV_CHECK(cuGraphLaunch(exec, stream));  // expect: replay-after-free
  DRV_CHECK(cuStreamSynchronize(stream));
  DRV_CHECK(cuGraphExecDestroy(exec));
  DRV_CHECK(cuGraphDestroy(graph));
  DRV_CHECK(cuMemFree(other));
  return 0;
}
