// Twin of unsafe_call_other_thread: the capture is begun in ThreadLocal mode, so other threads
// may allocate while it is open; their work is eager by design and not part of the graph.
#include <thread>

#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  LAUNCH_BUMP(args, stream);
  void* scratch = nullptr;
  std::thread telemetry([&scratch] { CHECK(cudaMalloc(&scratch, 1 << 20)); });
  telemetry.join();
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  CHECK(cudaFree(scratch));
  return 0;
}
