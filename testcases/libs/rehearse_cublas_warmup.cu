// Capture rehearsal: the region "step" creates its cuBLAS handle the first time it runs
// (the handle's creation allocates and loads cuBLAS's kernels, what a library does on first use),
// then runs a GEMM on the region's stream; later executions only run the GEMM. Rehearsed in global
// mode, only the first execution would break a capture: capturable after 1 warm-up execution,
// and the warm-up list names the handle creation.
// capguard-args: --rehearse step
// expect-rehearsal: step capturable_after_warmup 1
#include <cublas_v2.h>
#include <nvtx3/nvToolsExt.h>

#include "libs/lib_common.h"

constexpr int kN = 128;

int main() {
  float* a = device_floats(kN * kN, 1.0f);
  float* b = device_floats(kN * kN, 2.0f);
  float* c = device_floats(kN * kN, 0.0f);
  cudaStream_t stream = non_blocking_stream();
  cublasHandle_t handle = nullptr;
  const float one = 1.0f, zero = 0.0f;
  for (int i = 0; i < 3; ++i) {
    nvtxRangePushA("step");
    if (handle == nullptr) {
      LIB_CHECK(cublasCreate(&handle));  // expect: unsafe-call-during-capture*4
      LIB_CHECK(cublasSetStream(handle, stream));
    }
    LIB_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &one, a, kN, b, kN, &zero, c, kN));
    nvtxRangePop();
  }
  CHECK(cudaStreamSynchronize(stream));
  LIB_CHECK(cublasDestroy(handle));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
