// Twin of escaped_legacy_work*: the copy and the kernel go to the capturing stream.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  BumpArgs other_args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  int* host_input = nullptr;
  CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_input), kBytes));

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  CHECK(cudaMemcpyAsync(args.data, host_input, kBytes, cudaMemcpyHostToDevice, stream));
  LAUNCH_BUMP(args, stream);
  LAUNCH_BUMP(other_args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  return 0;
}
