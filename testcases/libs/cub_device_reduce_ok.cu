// CUB device algorithms captured correctly: the temporary storage sized (a call with a null
// pointer) and allocated before the capture, then cub::DeviceReduce::Sum and
// cub::DeviceScan::InclusiveSum on the capturing stream. capguard must report nothing.
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include "libs/lib_common.h"

constexpr int kCount = 1 << 16;

int main() {
  float* in = device_floats(kCount, 1.0f);
  float* out = device_floats(kCount, 0.0f);
  cudaStream_t stream = non_blocking_stream();
  size_t reduce_bytes = 0, scan_bytes = 0;
  CHECK(cub::DeviceReduce::Sum(nullptr, reduce_bytes, in, out, kCount, stream));
  CHECK(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, in, out, kCount, stream));
  void* temp = nullptr;
  const size_t bytes = reduce_bytes > scan_bytes ? reduce_bytes : scan_bytes;
  CHECK(cudaMalloc(&temp, bytes));
  CHECK(cub::DeviceReduce::Sum(temp, reduce_bytes, in, out, kCount, stream));  // warm-up
  CHECK(cub::DeviceScan::InclusiveSum(temp, scan_bytes, in, out, kCount, stream));
  CHECK(cudaStreamSynchronize(stream));

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  CHECK(cub::DeviceReduce::Sum(temp, reduce_bytes, in, out, kCount, stream));
  CHECK(cub::DeviceScan::InclusiveSum(temp, scan_bytes, in, out, kCount, stream));
  end_and_replay(stream);

  CHECK(cudaFree(temp));
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
