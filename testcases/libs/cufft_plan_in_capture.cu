// cuFFT's plan made inside a Relaxed capture: plan creation copies its tables to the
// GPU with a synchronous cuMemcpyHtoD, which runs now and is not in the graph. That is harmless:
// the tables stay in the plan's device memory, which the captured FFT kernels read on every
// replay while the plan lives. capguard reports the copy as escaped-sync-copy, named as cuFFT
// plan creation, with "the replay is not affected" as its fix. Measured on the H200 (CUDA 13.0's
// cuFFT 12): two such copies, and a cuMemAlloc of its work area (relaxed-mode-unsafe-call).
#include <cufft.h>

#include "libs/lib_common.h"

constexpr int kN = 1024;

int main() {
  cufftComplex* data = nullptr;
  CHECK(cudaMalloc(&data, kN * sizeof(cufftComplex)));
  CHECK(cudaMemset(data, 0, kN * sizeof(cufftComplex)));
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
  cufftHandle plan = 0;
  LIB_CHECK(cufftPlan1d(&plan, kN, CUFFT_C2C, 1));  // expect: escaped-sync-copy*2, relaxed-mode-unsafe-call
  LIB_CHECK(cufftSetStream(plan, stream));
  LIB_CHECK(cufftExecC2C(plan, data, data, CUFFT_FORWARD));
  end_and_replay(stream);

  LIB_CHECK(cufftDestroy(plan));
  CHECK(cudaFree(data));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
