// CUB's CachingDeviceAllocator asked for temporary storage inside a Global capture: its cache is
// empty, so it calls cudaMalloc, which CUDA rejects (900). The culprit is the program's
// DeviceAllocate line, with CUB's allocator shown as the way there.
// Twin: cub_device_reduce_ok (temporary storage allocated before the capture).
#include <cub/device/device_reduce.cuh>
#include <cub/util_allocator.cuh>

#include "libs/lib_common.h"

constexpr int kCount = 1 << 16;

int main() {
  float* in = device_floats(kCount, 1.0f);
  float* out = device_floats(1, 0.0f);
  cudaStream_t stream = non_blocking_stream();
  size_t bytes = 0;
  CHECK(cub::DeviceReduce::Sum(nullptr, bytes, in, out, kCount, stream));
  cub::CachingDeviceAllocator allocator;
  void* warm = nullptr;  // warm-up with storage of its own: the cache stays empty for `bytes`
  CHECK(cudaMalloc(&warm, bytes));
  CHECK(cub::DeviceReduce::Sum(warm, bytes, in, out, kCount, stream));
  CHECK(cudaStreamSynchronize(stream));

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  void* temp = nullptr;
  CHECK(allocator.DeviceAllocate(&temp, bytes, stream));  // expect: unsafe-call-during-capture
  if (temp != nullptr) CHECK(cub::DeviceReduce::Sum(temp, bytes, in, out, kCount, stream));
  end_and_replay(stream);

  CHECK(cudaFree(warm));
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
