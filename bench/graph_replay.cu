// Replaying an instantiated graph many times (target: ratio <= 1.02).
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

  const double start = seconds_now();
  for (int i = 0; i < replays; ++i) BENCH_CHECK(cudaGraphLaunch(exec, stream));
  BENCH_CHECK(cudaStreamSynchronize(stream));
  const double elapsed = seconds_now() - start;

  print_metric("graph_replay", elapsed / replays * 1e6, "us/replay");
  BENCH_CHECK(cudaGraphExecDestroy(exec));
  BENCH_CHECK(cudaGraphDestroy(graph));
  BENCH_CHECK(cudaStreamDestroy(stream));
  return 0;
}
