// Twin of cufft_plan_in_capture: the plan is made and bound to the stream before the Relaxed
// capture begins, so its tables are copied eagerly; only the FFT is captured. Nothing is reported.
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

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
  LIB_CHECK(cufftExecC2C(plan, data, data, CUFFT_FORWARD));
  end_and_replay(stream);

  LIB_CHECK(cufftDestroy(plan));
  CHECK(cudaFree(data));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
