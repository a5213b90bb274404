// unsafe-call-during-capture through the driver API: cuMemAlloc during a Global capture begun
// with cuStreamBeginCapture (900, invalidated; cuStreamEndCapture returns 901).
#include "driver_common.h"

int main() {
  use_primary_context();
  CUdeviceptr buffer = driver_buffer();
  CUstream stream = driver_non_blocking_stream();

  DRV_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  DRV_CHECK(cuMemsetD32Async(buffer, 7, kWords, stream));
  CUdeviceptr scratch = 0;
  DRV_CHECK(cuMemAlloc(&scratch, 1 << 20));  // expect: unsafe-call-during-capture
  CUgraph graph = nullptr;
  DRV_CHECK(cuStreamEndCapture(stream, &graph));
  driver_discard(graph);
  return 0;
}
