// Twin of capture_ended_stream_destroyed: the Relaxed capture is ended (and its graph discarded)
// before its stream is destroyed; the same later work on another stream. Nothing is reported.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  cudaStream_t later = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
  LAUNCH_BUMP(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  discard(graph);
  CHECK(cudaStreamDestroy(stream));

  for (int i = 0; i < 7; ++i) LAUNCH_BUMP(args, later);
  int* scratch = nullptr;
  CHECK(cudaMalloc(&scratch, 1 << 20));
  CHECK(cudaStreamSynchronize(later));
  CHECK(cudaFree(scratch));
  CHECK(cudaStreamDestroy(later));
  return 0;
}
