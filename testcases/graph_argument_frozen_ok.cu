// Twin of graph_argument_frozen: the counter lives in device memory, copied in by a node of the
// graph before the kernel reads it, so each replay steps with the current value; a second kernel
// takes a value that never changed during warm-up (a constant scale), which is no finding.
#include "common.h"

__global__ void step_from_device(int* data, const int* step) { data[threadIdx.x] += *step; }
__global__ void scale(int* data, int factor) { data[threadIdx.x] *= factor; }

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  int* device_step = nullptr;
  int* host_step = nullptr;
  CHECK(cudaMalloc(&device_step, sizeof(int)));
  CHECK(cudaMallocHost(&host_step, sizeof(int)));
  int factor = 1;
  void* step_argv[2] = {&args.data, &device_step};
  void* scale_argv[2] = {&args.data, &factor};
  for (*host_step = 1; *host_step <= 3; ++*host_step) {
    CHECK(cudaMemcpyAsync(device_step, host_step, sizeof(int), cudaMemcpyHostToDevice, stream));
    CHECK(cudaLaunchKernel((const void*)step_from_device, dim3(1), dim3(kThreads), step_argv, 0, stream));
    CHECK(cudaLaunchKernel((const void*)scale, dim3(1), dim3(kThreads), scale_argv, 0, stream));
    CHECK(cudaStreamSynchronize(stream));
  }
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  CHECK(cudaMemcpyAsync(device_step, host_step, sizeof(int), cudaMemcpyHostToDevice, stream));
  CHECK(cudaLaunchKernel((const void*)step_from_device, dim3(1), dim3(kThreads), step_argv, 0, stream));
  CHECK(cudaLaunchKernel((const void*)scale, dim3(1), dim3(kThreads), scale_argv, 0, stream));
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (; *host_step <= 8; ++*host_step) {  // the copy node reads the pinned counter each replay
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
  }
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaFreeHost(host_step));
  CHECK(cudaFree(device_step));
  return 0;
}
