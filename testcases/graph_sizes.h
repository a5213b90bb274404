// Shared by the graph-lifecycle testcases: the batch sizes serving frameworks capture,
// and kernels whose launch geometry follows the batch size (one block of kRow threads per row), so
// that every size is its own specialization: the same topology, another grid.
//
// Each program keeps its own cudaStreamBeginCapture, in its own file: the capture site, where the
// lifecycle findings are placed, is that line.
#pragma once

#include <vector>

#include "common.h"

constexpr int kRow = 32;        // threads per block: one block per row of a batch
constexpr int kMaxBatch = 512;  // the largest batch any program captures
constexpr size_t kRowBytes = kMaxBatch * kRow * sizeof(float);

__global__ void scale_rows(float* data, int rows) {
  if (static_cast<int>(blockIdx.x) < rows) data[blockIdx.x * kRow + threadIdx.x] *= 0.5f;
}

// The extra node of a "richer" capture mode (SGLang returning hidden states as well).
__global__ void add_rows(float* data, int rows) {
  if (static_cast<int>(blockIdx.x) < rows) data[blockIdx.x * kRow + threadIdx.x] += 1.0f;
}

// out += in, row by row: the kernel whose input buffer moves in the churn programs.
__global__ void accumulate_rows(float* out, const float* in, int rows) {
  const unsigned i = blockIdx.x * kRow + threadIdx.x;
  if (static_cast<int>(blockIdx.x) < rows) out[i] += in[i];
}

// Prints a call only when it fails: these programs make thousands of correct calls.
inline cudaError_t quiet_result(const char* call, const char* file, int line, cudaError_t result) {
  return result == cudaSuccess ? result : print_result(call, file, line, result);
}
#define QUIET(call) quiet_result(#call, __FILE__, __LINE__, (call))

// scale_rows or add_rows over a batch of `rows`: grid `rows`, block kRow. cudaLaunchKernel copies
// the arguments (into the kernel node, in a capture), so they may live on this frame.
inline cudaError_t launch_rows(const void* kernel, float* data, int rows, cudaStream_t stream) {
  void* argv[2] = {&data, &rows};
  return cudaLaunchKernel(kernel, dim3(rows), dim3(kRow), argv, 0, stream);
}

inline cudaError_t launch_accumulate(float* out, const float* in, int rows, cudaStream_t stream) {
  void* argv[3] = {&out, &in, &rows};
  return cudaLaunchKernel((const void*)accumulate_rows, dim3(rows), dim3(kRow), argv, 0, stream);
}

inline float* row_buffer() {
  float* data = nullptr;
  CHECK(cudaMalloc(&data, kRowBytes));
  CHECK(cudaMemset(data, 0, kRowBytes));
  return data;
}

// Every kernel of this header launched once and finished before any capture begins.
inline void warm_up_rows(float* data) {
  CHECK(launch_rows((const void*)scale_rows, data, 1, nullptr));
  CHECK(launch_rows((const void*)add_rows, data, 1, nullptr));
  CHECK(launch_accumulate(data, data, 1, nullptr));
  CHECK(cudaDeviceSynchronize());
}

// vLLM's default cudagraph capture sizes (vllm#29825): 1, 2, 4, then 8..248 step 8, then
// 256..512 step 16: 51 sizes, returned largest first, the order vLLM captures them in.
inline std::vector<int> vllm_capture_sizes() {
  std::vector<int> sizes = {1, 2, 4};
  for (int size = 8; size <= 248; size += 8) sizes.push_back(size);
  for (int size = 256; size <= 512; size += 16) sizes.push_back(size);
  return std::vector<int>(sizes.rbegin(), sizes.rend());
}
