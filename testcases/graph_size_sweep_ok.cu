// Twin of graph_size_sweep: the 13 sizes are captured up front in one burst and kept, each then
// replayed 3 times, all destroyed at the end (no empty graph). Nothing is reported.
#include <vector>

#include "graph_sizes.h"

int main() {
  float* data = row_buffer();
  warm_up_rows(data);
  cudaStream_t stream = non_blocking_stream();
  std::vector<cudaGraphExec_t> execs;
  for (int size : {512, 256, 128, 64, 32, 16, 8, 7, 5, 4, 3, 2, 1}) {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    QUIET(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    QUIET(launch_rows((const void*)scale_rows, data, size, stream));
    QUIET(cudaStreamEndCapture(stream, &graph));
    QUIET(cudaGraphInstantiate(&exec, graph, 0));
    QUIET(cudaGraphDestroy(graph));
    execs.push_back(exec);
  }
  for (cudaGraphExec_t exec : execs)
    for (int i = 0; i < 3; ++i) QUIET(cudaGraphLaunch(exec, stream));
  QUIET(cudaStreamSynchronize(stream));
  for (cudaGraphExec_t exec : execs) QUIET(cudaGraphExecDestroy(exec));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(data));
  return 0;
}
