// thrust::reduce inside a Global capture with the default execution policy: Thrust allocates its
// temporary storage with cudaMalloc, which CUDA rejects (900); Thrust then throws. The culprit is
// the program's thrust::reduce line, with Thrust's frames shown as the way there.
// Twin: thrust_par_nosync_ok (a caching allocator filled before the capture).
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>

#include "libs/lib_common.h"

constexpr int kCount = 1 << 16;

int main() {
  thrust::device_vector<float> data(kCount, 1.0f);
  cudaStream_t stream = non_blocking_stream();
  float sum = thrust::reduce(thrust::cuda::par.on(stream), data.begin(), data.end());  // warm-up
  std::printf("sum before the capture: %g\n", sum);

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  try {
    sum = thrust::reduce(thrust::cuda::par.on(stream), data.begin(), data.end());  // expect: unsafe-call-during-capture
  } catch (const std::exception& error) {
    print_exception(error);
  }
  end_and_replay(stream);
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
