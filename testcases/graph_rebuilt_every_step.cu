// graph-rebuilt-every-step: every step captures the same kernels again, instantiates them,
// launches the exec once and destroys it: 50 rebuilds of one unchanged topology.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  for (int step = 0; step < 50; ++step) {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);  // expect: graph-rebuilt-every-step
    cudaLaunchKernel((const void*)bump, dim3(1), dim3(kThreads), args.argv, 0, stream);
    cudaLaunchKernel((const void*)bump, dim3(1), dim3(kThreads), args.argv, 0, stream);
    cudaStreamEndCapture(stream, &graph);
    cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphLaunch(exec, stream);
    cudaStreamSynchronize(stream);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  CHECK(cudaDeviceSynchronize());
  return 0;
}
