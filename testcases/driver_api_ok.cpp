// Twin of the *_driver programs: memory allocated before the capture, the copy and the memset
// enqueued on the capturing stream (pinned host memory), the context synchronized only after the
// graph was launched.
#include "driver_common.h"

int main() {
  use_primary_context();
  CUdeviceptr buffer = driver_buffer();
  CUstream stream = driver_non_blocking_stream();
  void* host_input = nullptr;
  DRV_CHECK(cuMemAllocHost(&host_input, kWordBytes));

  DRV_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  DRV_CHECK(cuMemsetD32Async(buffer, 7, kWords, stream));
  DRV_CHECK(cuMemcpyHtoDAsync(buffer, host_input, kWordBytes, stream));
  CUgraph graph = nullptr;
  DRV_CHECK(cuStreamEndCapture(stream, &graph));
  CUgraphExec exec = nullptr;
  DRV_CHECK(cuGraphInstantiate(&exec, graph, 0));
  DRV_CHECK(cuGraphLaunch(exec, stream));
  DRV_CHECK(cuStreamSynchronize(stream));
  DRV_CHECK(cuCtxSynchronize());
  DRV_CHECK(cuGraphExecDestroy(exec));
  DRV_CHECK(cuGraphDestroy(graph));
  DRV_CHECK(cuMemFreeHost(host_input));
  return 0;
}
