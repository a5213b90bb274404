// Twin of sync_during_capture*: wait for the work after the capture ended, once the graph ran.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  LAUNCH_BUMP(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  CHECK(cudaStreamQuery(stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaDeviceSynchronize());
  return 0;
}
