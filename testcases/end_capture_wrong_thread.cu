// end-capture-misuse: a Global capture is ended from a thread other than the one that began it:
// 908 (cudaErrorStreamCaptureWrongThread). That terminates the capture, so the beginning thread's
// own EndCapture afterwards returns 401; the culprit is the other thread's call.
#include <thread>

#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  std::thread finisher([stream] {
    cudaGraph_t graph = nullptr;
    CHECK(cudaStreamEndCapture(stream, &graph));  // expect: end-capture-misuse
    discard(graph);
  });
  finisher.join();
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  discard(graph);
  return 0;
}
