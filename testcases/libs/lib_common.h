// Shared by the library testcase programs: CHECK (../common.h) for CUDA calls, LIB_CHECK for a
// library's own status codes (cuBLAS, cuFFT, cuSPARSE, cuRAND all return 0 on success). Both
// print and never abort: what matters is what capguard reports.
#pragma once

#include <cstdio>
#include <cstring>
#include <exception>

#include "common.h"

inline int print_status(const char* call, const char* file, int line, int status) {
  const char* slash = std::strrchr(file, '/');
  std::printf("%s:%d: %s -> status %d\n", slash ? slash + 1 : file, line, call, status);
  std::fflush(stdout);
  return status;
}
#define LIB_CHECK(call) print_status(#call, __FILE__, __LINE__, static_cast<int>(call))

// Thrust reports a failed CUDA call by throwing; the programs print it and go on.
inline void print_exception(const std::exception& error) {
  std::printf("exception: %s\n", error.what());
  std::fflush(stdout);
}

// Ends the capture begun on `stream` and replays the graph (common.h): every correct program
// finishes its capture this way (a broken capture prints 901 and yields no graph).
inline void end_and_replay(cudaStream_t stream) {
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  if (graph != nullptr) replay(graph, stream);
}

inline float* device_floats(size_t count, float value) {
  float* data = nullptr;
  CHECK(cudaMalloc(&data, count * sizeof(float)));
  float* host = new float[count];
  for (size_t i = 0; i < count; ++i) host[i] = value;
  CHECK(cudaMemcpy(data, host, count * sizeof(float), cudaMemcpyHostToDevice));
  delete[] host;
  return data;
}
