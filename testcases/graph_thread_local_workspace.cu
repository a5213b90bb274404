// replay-after-free through a thread's exit (pytorch#192061, in the shape vLLM met it): a library
// keeps one workspace per thread (thread_local, freed by its destructor); a short-lived worker
// thread captures a kernel that uses its workspace, and exits; the main thread then replays the
// graph, whose kernel still writes the freed workspace. The release is no call of the program's:
// glibc runs the thread-local destructor as the thread ends.
#include <thread>

#include "common.h"

struct Workspace {  // what a library keeps per thread (a handle's workspace)
  int* data = nullptr;
  Workspace() { CHECK(cudaMalloc(&data, 1 << 20)); }
  ~Workspace() { CHECK(cudaFree(data)); }  // at thread exit
};
thread_local Workspace t_workspace;

int main() {
  BumpArgs warm(device_buffer());
  warm_up(warm);
  cudaStream_t stream = non_blocking_stream();
  cudaGraphExec_t exec = nullptr;
  std::thread worker([&] {
    BumpArgs args(t_workspace.data);
    cudaGraph_t graph = nullptr;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    LAUNCH_BUMP(args, stream);
    CHECK(cudaStreamEndCapture(stream, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaGraphDestroy(graph));
  });
  worker.join();  // the worker's workspace is gone now

  CHECK(cudaGraphLaunch(exec, stream));  // expect: replay-after-free
  CHECK(cudaStreamSynchronize(stream));  // a freed 1 MiB stays mapped: no fault, silent
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaFree(warm.data));
  return 0;
}
