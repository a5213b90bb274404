// Twin of graph_update_rejected: the new capture changes only the kernel's argument, which
// cudaGraphExecUpdate takes; the old buffer is freed only after the update.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  BumpArgs other(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  cudaGraph_t first = nullptr;
  cudaGraph_t second = nullptr;
  cudaGraphExec_t exec = nullptr;

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  CHECK(cudaStreamEndCapture(stream, &first));
  CHECK(cudaGraphInstantiate(&exec, first, 0));
  CHECK(cudaGraphLaunch(exec, stream));

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(other, stream);
  CHECK(cudaStreamEndCapture(stream, &second));
  cudaGraphExecUpdateResultInfo info = {};
  CHECK(cudaGraphExecUpdate(exec, second, &info));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaFree(args.data));  // the exec now holds `other`, not this buffer
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(first));
  CHECK(cudaGraphDestroy(second));
  return 0;
}
