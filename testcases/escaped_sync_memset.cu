// escaped-sync-copy (memset): a synchronous cudaMemset while a non-blocking stream captures.
// Accepted, run once at capture time, absent from the graph: replays never clear the buffer.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  CHECK(cudaMemset(args.data, 0, kBytes));  // expect: escaped-sync-copy
  LAUNCH_BUMP(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  return 0;
}
