// Shared by the runtime-API testcase programs.
//
// CHECK prints what CUDA returned and never aborts: the mistakes are intentional, and what
// matters is what capguard reports about them. Kernels are launched through the C entry point
// cudaLaunchKernel so that the culprit's caller is the very line that carries `// expect:`
// (a <<<>>> launch goes through nvcc's generated stub first; one testcase covers that on purpose).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

inline cudaError_t print_result(const char* call, const char* file, int line, cudaError_t result) {
  const char* slash = std::strrchr(file, '/');
  std::printf("%s:%d: %s -> %s (%d)\n", slash ? slash + 1 : file, line, call, cudaGetErrorName(result),
              static_cast<int>(result));
  std::fflush(stdout);
  return result;
}
#define CHECK(call) print_result(#call, __FILE__, __LINE__, (call))

constexpr int kThreads = 32;
constexpr size_t kBytes = kThreads * sizeof(int);

__global__ void bump(int* data) { data[threadIdx.x] += 1; }

// The argument array of bump(int*); it points into itself, so it is neither copied nor moved.
struct BumpArgs {
  explicit BumpArgs(int* target) : data(target) {}
  BumpArgs(const BumpArgs&) = delete;
  BumpArgs& operator=(const BumpArgs&) = delete;
  int* data;
  void* argv[1] = {&data};
};

// bump<<<1, kThreads, 0, stream>>>(args.data), attributed to the line of the macro.
#define LAUNCH_BUMP(args, stream) \
  CHECK(cudaLaunchKernel((const void*)bump, dim3(1), dim3(kThreads), (args).argv, 0, (stream)))

inline int* device_buffer() {
  int* data = nullptr;
  CHECK(cudaMalloc(&data, kBytes));
  CHECK(cudaMemset(data, 0, kBytes));
  return data;
}

// Loads the kernel and finishes everything before any capture begins, so that no capture ever
// sees lazy module loading or pending eager work.
inline void warm_up(BumpArgs& args) {
  LAUNCH_BUMP(args, nullptr);
  CHECK(cudaDeviceSynchronize());
}

inline cudaStream_t non_blocking_stream() {
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  return stream;
}

inline cudaEvent_t plain_event() {
  cudaEvent_t event = nullptr;
  CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  return event;
}

// What a correct program does with a captured graph: instantiate, replay, wait, destroy.
inline void replay(cudaGraph_t graph, cudaStream_t stream) {
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
}

// A failed capture returns a NULL graph; a capture that escaped work still returns one.
inline void discard(cudaGraph_t graph) {
  if (graph != nullptr) CHECK(cudaGraphDestroy(graph));
}
