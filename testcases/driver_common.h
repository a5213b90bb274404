// Shared by the driver-API testcase programs, which link libcuda only (no cudart at all, as in
// JAX/XLA or Triton). DRV_CHECK prints what the driver returned and never aborts.
#pragma once

#include <cuda.h>

#include <cstdio>
#include <cstring>

inline CUresult print_driver_result(const char* call, const char* file, int line, CUresult result) {
  const char* slash = std::strrchr(file, '/');
  const char* name = nullptr;
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS) name = "unknown";
  std::printf("%s:%d: %s -> %s (%d)\n", slash ? slash + 1 : file, line, call, name, static_cast<int>(result));
  std::fflush(stdout);
  return result;
}
#define DRV_CHECK(call) print_driver_result(#call, __FILE__, __LINE__, (call))

constexpr unsigned kWords = 256;
constexpr size_t kWordBytes = kWords * sizeof(unsigned);

// Makes device 0's primary context current on this thread, as the runtime would.
inline void use_primary_context() {
  CUdevice device = 0;
  CUcontext context = nullptr;
  DRV_CHECK(cuInit(0));
  DRV_CHECK(cuDeviceGet(&device, 0));
  DRV_CHECK(cuDevicePrimaryCtxRetain(&context, device));
  DRV_CHECK(cuCtxSetCurrent(context));
}

inline CUdeviceptr driver_buffer() {
  CUdeviceptr buffer = 0;
  DRV_CHECK(cuMemAlloc(&buffer, kWordBytes));
  DRV_CHECK(cuMemsetD32(buffer, 0, kWords));
  return buffer;
}

inline CUstream driver_non_blocking_stream() {
  CUstream stream = nullptr;
  DRV_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  return stream;
}

inline void driver_discard(CUgraph graph) {
  if (graph != nullptr) DRV_CHECK(cuGraphDestroy(graph));
}
