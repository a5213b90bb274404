// Twin of relaxed_mode_unsafe_call and relaxed_mode_exchanged: the buffer is allocated before the
// capture, so the capture does nothing that needs Relaxed mode.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  void* scratch = nullptr;
  CHECK(cudaMalloc(&scratch, 1 << 20));

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
  LAUNCH_BUMP(args, stream);
  CHECK(cudaMemsetAsync(scratch, 0, 1 << 20, stream));
  LAUNCH_BUMP(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  CHECK(cudaFree(scratch));
  return 0;
}
