// Twin of unsupported_during_capture*: managed memory is attached before the capture begins, and
// the host callback is enqueued with cudaLaunchHostFunc, which becomes a host node of the graph.
#include "common.h"

static void CUDART_CB report_progress(void*) { std::puts("progress"); }

int main() {
  int* managed = nullptr;
  CHECK(cudaMallocManaged(reinterpret_cast<void**>(&managed), kBytes));
  BumpArgs args(managed);
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  CHECK(cudaStreamAttachMemAsync(stream, static_cast<void*>(managed), 0, cudaMemAttachSingle));
  CHECK(cudaStreamSynchronize(stream));

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  CHECK(cudaLaunchHostFunc(stream, report_progress, nullptr));
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  return 0;
}
