// escaped-sync-copy through the driver API: the synchronous cuMemcpyHtoD (legacy stream) while a
// non-blocking stream captures. Accepted, run once, absent from the graph.
#include "driver_common.h"

static unsigned host_input[kWords];

int main() {
  use_primary_context();
  CUdeviceptr buffer = driver_buffer();
  CUstream stream = driver_non_blocking_stream();

  DRV_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  DRV_CHECK(cuMemsetD32Async(buffer, 7, kWords, stream));
  DRV_CHECK(cuMemcpyHtoD(buffer, host_input, kWordBytes));  // expect: escaped-sync-copy
  CUgraph graph = nullptr;
  DRV_CHECK(cuStreamEndCapture(stream, &graph));
  driver_discard(graph);
  return 0;
}
