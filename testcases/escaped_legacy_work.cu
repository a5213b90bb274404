// escaped-legacy-work: a kernel on the legacy NULL stream while a *non-blocking* stream captures.
// The two streams do not synchronize, so CUDA accepts the launch and runs it once, eagerly; the
// graph does not contain it.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  BumpArgs other_args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  LAUNCH_BUMP(other_args, nullptr);  // expect: escaped-legacy-work
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  return 0;
}
