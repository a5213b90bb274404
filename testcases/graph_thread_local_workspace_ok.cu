// The twin of graph_thread_local_workspace (no finding expected): the worker that captured with
// its thread-local workspace stays alive until the graph is destroyed; the main thread replays
// meanwhile, and the worker exits (freeing its workspace) only after cudaGraphExecDestroy.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common.h"

struct Workspace {
  int* data = nullptr;
  Workspace() { CHECK(cudaMalloc(&data, 1 << 20)); }
  ~Workspace() { CHECK(cudaFree(data)); }
};
thread_local Workspace t_workspace;

int main() {
  BumpArgs warm(device_buffer());
  warm_up(warm);
  cudaStream_t stream = non_blocking_stream();
  cudaGraphExec_t exec = nullptr;
  std::mutex mutex;
  std::condition_variable changed;
  bool captured = false, destroyed = false;
  std::thread worker([&] {
    BumpArgs args(t_workspace.data);
    cudaGraph_t graph = nullptr;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    LAUNCH_BUMP(args, stream);
    CHECK(cudaStreamEndCapture(stream, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaGraphDestroy(graph));
    std::unique_lock<std::mutex> lock(mutex);
    captured = true;
    changed.notify_all();
    changed.wait(lock, [&] { return destroyed; });  // alive as long as the graph
  });
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return captured; });
  }
  for (int i = 0; i < 3; ++i) CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGraphExecDestroy(exec));
  {
    std::lock_guard<std::mutex> lock(mutex);
    destroyed = true;
    changed.notify_all();
  }
  worker.join();
  CHECK(cudaFree(warm.data));
  return 0;
}
