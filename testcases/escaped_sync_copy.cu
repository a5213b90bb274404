// escaped-sync-copy: a synchronous cudaMemcpy while a non-blocking stream captures. CUDA accepts
// it, runs the copy once, now, and leaves it out of the graph: replays never copy the input.
#include "common.h"

static int host_input[kThreads];

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  CHECK(cudaMemcpy(args.data, host_input, kBytes, cudaMemcpyHostToDevice));  // expect: escaped-sync-copy
  LAUNCH_BUMP(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  return 0;
}
