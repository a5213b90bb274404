// Thrust captured correctly: algorithms run with thrust::cuda::par_nosync (no synchronization
// the algorithm does not need) and a caching allocator that was filled during a warm-up, so
// inside the Global capture nothing allocates or synchronizes. capguard must report nothing.
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/scan.h>
#include <thrust/transform.h>

#include "libs/lib_common.h"
#include "libs/thrust_caching_allocator.h"

constexpr int kCount = 1 << 16;

struct Twice {
  __host__ __device__ float operator()(float x) const { return 2.0f * x; }
};

void step(CachingAllocator& allocator, cudaStream_t stream, thrust::device_vector<float>& in,
          thrust::device_vector<float>& out) {
  auto policy = thrust::cuda::par_nosync(allocator).on(stream);
  thrust::fill(policy, in.begin(), in.end(), 1.0f);
  thrust::transform(policy, in.begin(), in.end(), out.begin(), Twice{});
  thrust::inclusive_scan(policy, out.begin(), out.end(), out.begin());
}

int main() {
  thrust::device_vector<float> in(kCount), out(kCount);
  cudaStream_t stream = non_blocking_stream();
  CachingAllocator allocator;
  try {
    step(allocator, stream, in, out);  // warm-up: loads the kernels, fills the allocator's cache
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    step(allocator, stream, in, out);
  } catch (const std::exception& error) {
    print_exception(error);
  }
  end_and_replay(stream);
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
