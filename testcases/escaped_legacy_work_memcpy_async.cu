// escaped-legacy-work: cudaMemcpyAsync on cudaStreamLegacy (the explicit handle 0x1) while a
// non-blocking stream captures. Accepted, run once, absent from the graph.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  int* host_input = nullptr;
  CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_input), kBytes));

  const auto to_device = cudaMemcpyHostToDevice;

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  CHECK(cudaMemcpyAsync(args.data, host_input, kBytes, to_device, cudaStreamLegacy));  // expect: escaped-legacy-work
  LAUNCH_BUMP(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  return 0;
}
