// Twin of graph_coverage_eager_between_replays: the fifth kernel is captured into the graph, so
// every kernel after warm-up runs inside replays and the gate at 95% passes.
// capguard-args: --min-graph-coverage 95
// expect-coverage: full
#include "common.h"

__global__ void scale(int* data, int factor) { data[threadIdx.x] *= factor; }

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  int factor = 1;
  void* scale_argv[2] = {&args.data, &factor};
  CHECK(cudaLaunchKernel((const void*)scale, dim3(1), dim3(kThreads), scale_argv, 0, stream));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 4; ++i) LAUNCH_BUMP(args, stream);
  CHECK(cudaLaunchKernel((const void*)scale, dim3(1), dim3(kThreads), scale_argv, 0, stream));
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int step = 0; step < 50; ++step) CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return 0;
}
