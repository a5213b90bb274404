// No finding expected: a graph with 3000 kernel nodes, a child graph, memcpy (pinned and
// pageable host), memset, host, event-record, event-wait and memory alloc/free nodes; replayed
// many times; every buffer freed only after its exec is destroyed; one exec destroyed while
// another keeps running.
#include "common.h"

__global__ void add(int* data, int value, int* other) { data[threadIdx.x] += value + (other != nullptr); }
void CUDART_CB on_host(void* counter) { ++*static_cast<int*>(counter); }

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  int* a = device_buffer();
  int* pinned = nullptr;
  CHECK(cudaMallocHost(&pinned, kBytes));
  static int pageable[kThreads];
  int host_counter = 0;
  void* add_args[3];
  int value = 1;
  add_args[0] = &a;
  add_args[1] = &value;
  add_args[2] = &args.data;
  CHECK(cudaLaunchKernel((const void*)add, dim3(1), dim3(kThreads), add_args, 0, nullptr));
  CHECK(cudaDeviceSynchronize());
  cudaStream_t stream = non_blocking_stream();
  cudaStream_t side = non_blocking_stream();
  cudaEvent_t fork = plain_event();
  cudaEvent_t join = plain_event();

  // A child graph built by hand.
  cudaGraph_t child = nullptr;
  CHECK(cudaGraphCreate(&child, 0));
  cudaKernelNodeParams kernel = {};
  kernel.func = (void*)bump;
  kernel.gridDim = dim3(1);
  kernel.blockDim = dim3(kThreads);
  kernel.kernelParams = args.argv;
  cudaGraphNode_t node = nullptr;
  CHECK(cudaGraphAddKernelNode(&node, child, nullptr, 0, &kernel));

  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 3000; ++i) cudaLaunchKernel((const void*)add, dim3(1), dim3(kThreads), add_args, 0, stream);
  CHECK(cudaMemcpyAsync(a, pinned, kBytes, cudaMemcpyHostToDevice, stream));
  CHECK(cudaMemcpyAsync(pageable, a, kBytes, cudaMemcpyDeviceToHost, stream));
  CHECK(cudaMemsetAsync(a, 0, kBytes, stream));
  CHECK(cudaLaunchHostFunc(stream, on_host, &host_counter));
  CHECK(cudaEventRecord(fork, stream));
  CHECK(cudaStreamWaitEvent(side, fork, 0));
  int* scratch = nullptr;
  CHECK(cudaMallocAsync(&scratch, kBytes, side));
  CHECK(cudaMemsetAsync(scratch, 0, kBytes, side));
  CHECK(cudaFreeAsync(scratch, side));
  CHECK(cudaEventRecord(join, side));
  CHECK(cudaStreamWaitEvent(stream, join, 0));
  CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphNode_t child_node = nullptr;
  CHECK(cudaGraphAddChildGraphNode(&child_node, graph, nullptr, 0, child));

  cudaGraphExec_t exec = nullptr;
  cudaGraphExec_t second = nullptr;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphInstantiate(&second, child, 0));
  for (int i = 0; i < 20; ++i) {
    cudaGraphLaunch(exec, stream);
    cudaGraphLaunch(second, stream);
  }
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGraphExecDestroy(second));
  for (int i = 0; i < 5; ++i) cudaGraphLaunch(exec, stream);
  CHECK(cudaStreamSynchronize(stream));
  std::printf("host node ran %d times\n", host_counter);
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaGraphDestroy(child));
  CHECK(cudaFree(a));
  CHECK(cudaFreeHost(pinned));
  CHECK(cudaFree(args.data));
  return 0;
}
