// Twin of escaped_side_stream_work_launch_ex: every cudaLaunchKernelEx names a stream of the
// capture in its launch config (the side stream forked in with an event and joined back), so
// both kernels are nodes of the graph. capguard must report nothing.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  BumpArgs side_args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  cudaStream_t side = non_blocking_stream();
  cudaEvent_t fork = plain_event();
  cudaEvent_t join = plain_event();
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(1);
  config.blockDim = dim3(kThreads);

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  config.stream = stream;
  CHECK(cudaLaunchKernelExC(&config, (const void*)bump, args.argv));
  CHECK(cudaEventRecord(fork, stream));
  CHECK(cudaStreamWaitEvent(side, fork, 0));
  config.stream = side;
  CHECK(cudaLaunchKernelExC(&config, (const void*)bump, side_args.argv));
  CHECK(cudaEventRecord(join, side));
  CHECK(cudaStreamWaitEvent(stream, join, 0));
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  return 0;
}
