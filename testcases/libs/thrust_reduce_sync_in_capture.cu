// thrust::reduce inside a Global capture, its temporary storage from a caching allocator filled
// before the capture: nothing allocates, but reduce returns its result to the host, so Thrust
// synchronizes the capturing stream, which CUDA rejects (900); Thrust then throws. The culprit
// is the program's thrust::reduce line. Twin: thrust_par_nosync_ok (scans in place instead).
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>

#include "libs/lib_common.h"
#include "libs/thrust_caching_allocator.h"

constexpr int kCount = 1 << 16;

int main() {
  thrust::device_vector<float> data(kCount, 1.0f);
  cudaStream_t stream = non_blocking_stream();
  CachingAllocator allocator;
  auto policy = thrust::cuda::par(allocator).on(stream);
  float sum = thrust::reduce(policy, data.begin(), data.end());  // warm-up
  std::printf("sum before the capture: %g\n", sum);

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  try {
    sum = thrust::reduce(policy, data.begin(), data.end());  // expect: sync-during-capture
  } catch (const std::exception& error) {
    print_exception(error);
  }
  end_and_replay(stream);
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
