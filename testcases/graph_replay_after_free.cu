// replay-after-free: a kernel captured writing `tmp` is replayed after cudaFree(tmp). CUDA accepts
// the launch; on the H100 the freed 128-byte range is unmapped, so the sync after it returns 700:
// graph-replay-failed, with the free as its cause (a freed 1 MiB buffer stayed mapped: silent).
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));

  CHECK(cudaFree(args.data));            // the graph still holds this address
  CHECK(cudaGraphLaunch(exec, stream));  // expect: replay-after-free
  CHECK(cudaStreamSynchronize(stream));  // expect: graph-replay-failed
  CHECK(cudaGraphLaunch(exec, stream));  // the same replay again: a consequence, not a finding
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return 0;
}
