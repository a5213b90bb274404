// Replaying an instantiated graph many times (target: ratio <= 1.02).
// CAPGUARD_BENCH_CHUNK=N also prints, on stderr, when each N replays were issued (since the timed
// loop began, and CLOCK_MONOTONIC as CAPGUARD_DETACH_LOG stamps its lines) and at what rate:
// where a run's extra time goes (the gate's linger, the detach).
#include <vector>

#include "bench_common.h"

int main(int argc, char** argv) {
  const int replays = argc > 1 ? std::atoi(argv[1]) : 20000;
  const int kernels_per_graph = 20;
  cudaStream_t stream;
  BENCH_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  BENCH_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < kernels_per_graph; ++i) empty_kernel<<<1, 1, 0, stream>>>();
  BENCH_CHECK(cudaStreamEndCapture(stream, &graph));
  BENCH_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 100; ++i) BENCH_CHECK(cudaGraphLaunch(exec, stream));
  BENCH_CHECK(cudaStreamSynchronize(stream));

  const char* chunk_env = std::getenv("CAPGUARD_BENCH_CHUNK");
  const int chunk = chunk_env != nullptr ? std::atoi(chunk_env) : 0;
  std::vector<double> issued;  // kept in memory: printing inside the loop would be timed
  if (chunk > 0) issued.reserve(replays / chunk + 1);
  const double start = seconds_now();
  for (int i = 0; i < replays; ++i) {
    BENCH_CHECK(cudaGraphLaunch(exec, stream));
    if (chunk > 0 && (i + 1) % chunk == 0) issued.push_back(seconds_now());
  }
  BENCH_CHECK(cudaStreamSynchronize(stream));
  const double elapsed = seconds_now() - start;
  for (size_t c = 0; c < issued.size(); ++c) {
    const double since = (issued[c] - (c == 0 ? start : issued[c - 1])) * 1e6 / chunk;
    std::fprintf(stderr, "chunk %zu issued at %.3f ms (monotonic %.3f s), %.3f us/replay\n", c,
                 (issued[c] - start) * 1e3, issued[c], since);
  }

  print_metric("graph_replay", elapsed / replays * 1e6, "us/replay");
  BENCH_CHECK(cudaGraphExecDestroy(exec));
  BENCH_CHECK(cudaGraphDestroy(graph));
  BENCH_CHECK(cudaStreamDestroy(stream));
  return 0;
}
