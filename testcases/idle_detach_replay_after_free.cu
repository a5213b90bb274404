// replay-after-free across an idle detach: the graph is replayed long enough for
// capguard to let CUPTI go (the program asks for it at once), so the free finds CUPTI detached.
// Its guard attaches again before the free proceeds, and the replay after it is caught as before.
#include <unistd.h>

#include <cstdlib>

#include "common.h"

int main() {
  setenv("CAPGUARD_DETACH_IDLE_MS", "0", 0);  // detach at the first quiet replay (read at cuInit)
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 100; ++i) cudaGraphLaunch(exec, stream);  // past its first launches
  CHECK(cudaStreamSynchronize(stream));
  usleep(50000);                                                 // past the gate's linger
  for (int i = 0; i < 1000; ++i) cudaGraphLaunch(exec, stream);  // CUPTI detaches here
  CHECK(cudaStreamSynchronize(stream));

  CHECK(cudaFree(args.data));            // the graph still holds this address
  CHECK(cudaGraphLaunch(exec, stream));  // expect: replay-after-free
  CHECK(cudaStreamSynchronize(stream));  // expect: graph-replay-failed
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return 0;
}
