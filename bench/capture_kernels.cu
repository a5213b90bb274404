// Capturing 1000 kernels into a graph, repeatedly (target: ratio <= 2.0). Every call made
// while a capture is open is recorded, so this is capguard's worst case by design.
#include "bench_common.h"

int main(int argc, char** argv) {
  const int kernels = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 50;
  cudaStream_t stream;
  BENCH_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  auto capture_once = [&] {
    cudaGraph_t graph;
    BENCH_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < kernels; ++i) empty_kernel<<<1, 1, 0, stream>>>();
    BENCH_CHECK(cudaStreamEndCapture(stream, &graph));
    BENCH_CHECK(cudaGraphDestroy(graph));
  };
  capture_once();  // warm-up: module load, first-capture setup

  const double start = seconds_now();
  for (int r = 0; r < repeats; ++r) capture_once();
  const double elapsed = seconds_now() - start;

  print_metric("capture_1000_kernels", elapsed / repeats * 1e3, "ms/capture");
  BENCH_CHECK(cudaStreamDestroy(stream));
  return 0;
}
