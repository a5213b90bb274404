// cuBLAS GEMMs captured correctly: the handle is bound to the (non-blocking) capturing stream and
// warmed up before the capture; captured once with cuBLAS's own workspace and once with a
// workspace the program provides (cublasSetWorkspace). capguard must report nothing.
#include <cublas_v2.h>

#include "libs/lib_common.h"

constexpr int kN = 128;

void gemm(cublasHandle_t handle, const float* a, const float* b, float* c) {
  const float one = 1.0f, zero = 0.0f;
  constexpr cublasOperation_t N = CUBLAS_OP_N;
  LIB_CHECK(cublasSgemm(handle, N, N, kN, kN, kN, &one, a, kN, b, kN, &zero, c, kN));
}

int main() {
  float* a = device_floats(kN * kN, 1.0f);
  float* b = device_floats(kN * kN, 2.0f);
  float* c = device_floats(kN * kN, 0.0f);
  cudaStream_t stream = non_blocking_stream();
  cublasHandle_t handle = nullptr;
  LIB_CHECK(cublasCreate(&handle));
  LIB_CHECK(cublasSetStream(handle, stream));
  gemm(handle, a, b, c);  // warm-up: loads the kernels outside any capture
  CHECK(cudaStreamSynchronize(stream));

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  gemm(handle, a, b, c);
  end_and_replay(stream);

  constexpr size_t kWorkspace = 32 << 20;
  void* workspace = nullptr;
  CHECK(cudaMalloc(&workspace, kWorkspace));
  LIB_CHECK(cublasSetWorkspace(handle, workspace, kWorkspace));
  gemm(handle, a, b, c);
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  gemm(handle, a, b, c);
  end_and_replay(stream);

  LIB_CHECK(cublasDestroy(handle));
  CHECK(cudaFree(workspace));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
