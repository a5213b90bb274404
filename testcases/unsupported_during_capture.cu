// unsupported-during-capture: cudaStreamAttachMemAsync on the capturing stream. Capture does not
// support managed-memory attachment: 900, capture invalidated, EndCapture returns 901.
#include "common.h"

int main() {
  int* managed = nullptr;
  CHECK(cudaMallocManaged(reinterpret_cast<void**>(&managed), kBytes));
  BumpArgs args(managed);
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  void* attached = managed;  // the C overload, not cuda_runtime.h's template wrapper

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  CHECK(cudaStreamAttachMemAsync(stream, attached, 0, cudaMemAttachSingle));  // expect: unsupported-during-capture
  LAUNCH_BUMP(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  discard(graph);
  return 0;
}
