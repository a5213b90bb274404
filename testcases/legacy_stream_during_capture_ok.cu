// Twin of legacy_stream_during_capture*: during the capture of a blocking stream, all work goes
// to the capturing stream; the legacy stream is used again only after EndCapture.
#include "common.h"

static int host_input[kThreads];

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreate(&stream));

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  CHECK(cudaMemcpyAsync(args.data, host_input, kBytes, cudaMemcpyHostToDevice, stream));
  LAUNCH_BUMP(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  LAUNCH_BUMP(args, nullptr);
  CHECK(cudaMemcpy(host_input, args.data, kBytes, cudaMemcpyDeviceToHost));
  return 0;
}
