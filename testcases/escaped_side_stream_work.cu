// escaped-side-stream-work: the capturing thread launches a kernel on another stream that was
// never forked into the capture. It runs once, eagerly, and the graph does not contain it.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  BumpArgs side_args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  cudaStream_t side = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  LAUNCH_BUMP(side_args, side);  // expect: escaped-side-stream-work
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  CHECK(cudaStreamSynchronize(side));
  return 0;
}
