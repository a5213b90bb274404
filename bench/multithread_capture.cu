// Eight threads capturing at once, each on its own non-blocking stream in ThreadLocal mode:
// the recording path under contention between threads.
#include <thread>
#include <vector>

#include "bench_common.h"

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 8;
  const int kernels = argc > 2 ? std::atoi(argv[2]) : 500;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 20;
  BENCH_CHECK(cudaFree(nullptr));  // create the context before the threads race for it

  auto worker = [&] {
    cudaStream_t stream;
    BENCH_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (int r = 0; r < repeats; ++r) {
      cudaGraph_t graph;
      BENCH_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < kernels; ++i) empty_kernel<<<1, 1, 0, stream>>>();
      BENCH_CHECK(cudaStreamEndCapture(stream, &graph));
      BENCH_CHECK(cudaGraphDestroy(graph));
    }
    BENCH_CHECK(cudaStreamDestroy(stream));
  };
  worker();  // warm-up on the main thread

  const double start = seconds_now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  const double elapsed = seconds_now() - start;

  print_metric("multithread_capture", elapsed * 1e3, "ms");
  return 0;
}
