// cuFFT captured correctly: the plan (and its work area) made before the capture, bound to the
// capturing stream with cufftSetStream, warmed up, then cufftExecC2C inside a Global capture.
// capguard must report nothing.
#include <cufft.h>

#include "libs/lib_common.h"

constexpr int kN = 1024;

int main() {
  cufftComplex* data = nullptr;
  CHECK(cudaMalloc(&data, kN * sizeof(cufftComplex)));
  CHECK(cudaMemset(data, 0, kN * sizeof(cufftComplex)));
  cudaStream_t stream = non_blocking_stream();
  cufftHandle plan = 0;
  LIB_CHECK(cufftPlan1d(&plan, kN, CUFFT_C2C, 1));
  LIB_CHECK(cufftSetStream(plan, stream));
  LIB_CHECK(cufftExecC2C(plan, data, data, CUFFT_FORWARD));  // warm-up
  CHECK(cudaStreamSynchronize(stream));

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LIB_CHECK(cufftExecC2C(plan, data, data, CUFFT_FORWARD));
  LIB_CHECK(cufftExecC2C(plan, data, data, CUFFT_INVERSE));
  end_and_replay(stream);

  LIB_CHECK(cufftDestroy(plan));
  CHECK(cudaFree(data));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
