// A cuBLAS handle never bound to a stream works on the legacy NULL stream. While a *blocking*
// stream captures, its GEMM launches on the legacy stream, which CUDA rejects (906) and which
// invalidates the capture. The culprit is the program's cublasSgemm line, not cuBLAS's internals.
// Twin: cublas_gemm_ok (cublasSetStream to the capturing stream).
#include <cublas_v2.h>

#include "libs/lib_common.h"

constexpr int kN = 128;

int main() {
  float* a = device_floats(kN * kN, 1.0f);
  float* b = device_floats(kN * kN, 2.0f);
  float* c = device_floats(kN * kN, 0.0f);
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreate(&stream));  // blocking: it synchronizes with the legacy stream
  cublasHandle_t h = nullptr;
  LIB_CHECK(cublasCreate(&h));  // no cublasSetStream: the legacy NULL stream
  const float one = 1.0f, zero = 0.0f;
  constexpr cublasOperation_t N = CUBLAS_OP_N;
  constexpr int n = kN;
  LIB_CHECK(cublasSgemm(h, N, N, n, n, n, &one, a, n, b, n, &zero, c, n));
  CHECK(cudaDeviceSynchronize());

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LIB_CHECK(cublasSgemm(h, N, N, n, n, n, &one, a, n, b, n, &zero, c, n));  // expect: legacy-stream-during-capture
  end_and_replay(stream);

  LIB_CHECK(cublasDestroy(h));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
