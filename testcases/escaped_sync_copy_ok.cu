// Twin of escaped_sync_copy: the copy is enqueued on the capturing stream, from pinned memory, so
// it is a memcpy node that runs on every replay.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  int* host_input = nullptr;
  CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_input), kBytes));

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  CHECK(cudaMemcpyAsync(args.data, host_input, kBytes, cudaMemcpyHostToDevice, stream));
  LAUNCH_BUMP(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  CHECK(cudaFreeHost(host_input));
  return 0;
}
