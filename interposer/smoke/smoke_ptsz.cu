// Built with --default-stream per-thread: every stream call goes through a _ptsz entry point,
// and capture on the per-thread stream (handle 0 in the API) is allowed.
#include <cuda_runtime.h>

#include <cstdio>

__global__ void touch(int* p) { p[threadIdx.x] += 1; }

int main() {
  int* d;
  cudaMalloc(&d, 64 * sizeof(int));
  int h[64] = {};
  cudaGraph_t g = nullptr;
  printf("begin %d\n", cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal));
  touch<<<1, 32>>>(d);
  printf("async copy %d\n", cudaMemcpyAsync(d, h, sizeof(h), cudaMemcpyHostToDevice, 0));
  printf("end %d\n", cudaStreamEndCapture(0, &g));
  size_t n = 0;
  cudaGraphGetNodes(g, nullptr, &n);
  printf("nodes %zu\n", n);
  return 0;
}
