// Shared by the GPU benchmarks: a checked CUDA call and a monotonic clock.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#define BENCH_CHECK(call)                                                             \
  do {                                                                                \
    cudaError_t bench_err_ = (call);                                                  \
    if (bench_err_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,       \
                   cudaGetErrorString(bench_err_));                                   \
      std::exit(2);                                                                   \
    }                                                                                 \
  } while (0)

inline double seconds_now() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

__global__ void empty_kernel() {}

// Every benchmark prints one line "metric <name> <value> <unit>" that bench/run.py reads.
inline void print_metric(const char* name, double value, const char* unit) {
  std::printf("metric %s %.6g %s\n", name, value, unit);
}
