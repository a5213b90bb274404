// escaped-side-stream-work through cudaLaunchKernelEx, whose stream is a member of the launch
// config (as CUTLASS and PyTorch launch cluster kernels): the capturing thread launches on a
// stream that was never forked into the capture. It runs once, eagerly; the graph lacks it.
// Twin: launch_kernel_ex_ok.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  BumpArgs side_args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  cudaStream_t side = non_blocking_stream();
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(1);
  config.blockDim = dim3(kThreads);

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  config.stream = stream;
  CHECK(cudaLaunchKernelExC(&config, (const void*)bump, args.argv));
  config.stream = side;
  CHECK(cudaLaunchKernelExC(&config, (const void*)bump, side_args.argv));  // expect: escaped-side-stream-work
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  CHECK(cudaStreamSynchronize(side));
  return 0;
}
