// A capture after an idle detach: CUPTI was let go while one graph was replayed; the
// stream made for the second capture attaches it again, and the allocation inside that capture
// is caught as it would be without the detach.
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

  cudaStream_t second = non_blocking_stream();
  cudaGraph_t graph2 = nullptr;
  void* scratch = nullptr;
  CHECK(cudaStreamBeginCapture(second, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, second);
  CHECK(cudaMalloc(&scratch, 1 << 20));  // expect: unsafe-call-during-capture
  CHECK(cudaStreamEndCapture(second, &graph2));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return 0;
}
