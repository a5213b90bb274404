// sync-during-capture through the driver API: cuCtxSynchronize while a stream of the context
// captures (900, invalidated).
#include "driver_common.h"

int main() {
  use_primary_context();
  CUdeviceptr buffer = driver_buffer();
  CUstream stream = driver_non_blocking_stream();

  DRV_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  DRV_CHECK(cuMemsetD32Async(buffer, 7, kWords, stream));
  DRV_CHECK(cuCtxSynchronize());  // expect: sync-during-capture
  CUgraph graph = nullptr;
  DRV_CHECK(cuStreamEndCapture(stream, &graph));
  driver_discard(graph);
  return 0;
}
