// Twin of unsafe_call_during_capture*: memory the graph needs is allocated and freed by stream-
// ordered calls, which become memory nodes of the graph.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  int* scratch = nullptr;
  CHECK(cudaMallocAsync(reinterpret_cast<void**>(&scratch), kBytes, stream));
  CHECK(cudaMemsetAsync(scratch, 0, kBytes, stream));
  BumpArgs scratch_args(scratch);
  LAUNCH_BUMP(scratch_args, stream);
  CHECK(cudaFreeAsync(scratch, stream));
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  return 0;
}
