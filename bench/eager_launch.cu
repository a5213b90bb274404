// Launch-bound eager loop: empty kernels on one stream, no capture anywhere.
// capguard must cost almost nothing here (target: ratio <= 1.05).
// CAPGUARD_BENCH_RANGE=NAME puts the timed loop in an NVTX range of that name: under
// `capguard run --rehearse NAME` every launch is then rehearsed (bench/rehearse_cost.py).
#include <nvtx3/nvToolsExt.h>

#include <cstdlib>

#include "bench_common.h"

int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::atoi(argv[1]) : 200000;
  cudaStream_t stream;
  BENCH_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (int i = 0; i < 1000; ++i) empty_kernel<<<1, 1, 0, stream>>>();
  BENCH_CHECK(cudaStreamSynchronize(stream));

  const char* range = std::getenv("CAPGUARD_BENCH_RANGE");
  const double start = seconds_now();
  if (range != nullptr) nvtxRangePushA(range);
  for (int i = 0; i < launches; ++i) empty_kernel<<<1, 1, 0, stream>>>();
  if (range != nullptr) nvtxRangePop();
  BENCH_CHECK(cudaStreamSynchronize(stream));
  const double elapsed = seconds_now() - start;

  BENCH_CHECK(cudaGetLastError());
  print_metric("eager_launch", elapsed / launches * 1e6, "us/launch");
  BENCH_CHECK(cudaStreamDestroy(stream));
  return 0;
}
