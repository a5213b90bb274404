// graph-update-rejected: the new capture replaces the kernel by a memset; cudaGraphExecUpdate
// answers cudaErrorGraphExecUpdateFailure (910), result "node type changed" at that node
// (measured on the H100), and the program falls back to a new instantiate.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
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
  CHECK(cudaMemsetAsync(args.data, 0, kBytes, stream));
  CHECK(cudaStreamEndCapture(stream, &second));
  cudaGraphExecUpdateResultInfo info = {};
  if (CHECK(cudaGraphExecUpdate(exec, second, &info)) != cudaSuccess) {  // expect: graph-update-rejected
    std::printf("update result %d\n", static_cast<int>(info.result));
    CHECK(cudaGetLastError());  // the runtime keeps 910 as the last error
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphInstantiate(&exec, second, 0));
  }
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(first));
  CHECK(cudaGraphDestroy(second));
  return 0;
}
