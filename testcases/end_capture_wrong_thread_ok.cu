// Twin of end_capture_wrong_thread: the worker thread that begins the capture also ends it; the
// main thread only waits for the worker and replays the graph.
#include <thread>

#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  cudaGraph_t graph = nullptr;
  std::thread capturer([stream, &args, &graph] {
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    LAUNCH_BUMP(args, stream);
    CHECK(cudaStreamEndCapture(stream, &graph));
  });
  capturer.join();
  replay(graph, stream);
  return 0;
}
