// Graph coverage: a loop replays a graph of four kernels and launches one kernel eagerly between
// replays (a new op slipped in after the graph was made). After warm-up 4 of every 5 kernels run
// as graphs (80%): the gate at 95% fails the run.
// capguard-args: --min-graph-coverage 95
// expect-exit: 1
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
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int step = 0; step < 50; ++step) {
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaLaunchKernel((const void*)scale, dim3(1), dim3(kThreads), scale_argv, 0, stream));  // expect-eager
  }
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return 0;
}
