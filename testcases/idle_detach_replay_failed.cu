// graph-replay-failed across an idle detach: CUPTI was let go while the graph was
// replayed; the replay that faults is made detached, and the synchronize where its 700 surfaces
// is delivered by capguard's own guard after attaching again.
#include <unistd.h>

#include <cstdlib>

#include "common.h"

__global__ void store_through(int** slot) { **slot = 1; }

int main() {
  setenv("CAPGUARD_DETACH_IDLE_MS", "0", 0);  // detach at the first quiet replay (read at cuInit)
  BumpArgs args(device_buffer());
  warm_up(args);
  int** slot = nullptr;
  CHECK(cudaMalloc(&slot, sizeof(int*)));
  CHECK(cudaMemcpy(slot, &args.data, sizeof(int*), cudaMemcpyHostToDevice));
  void* argv[] = {&slot};
  CHECK(cudaLaunchKernel((const void*)store_through, dim3(1), dim3(1), argv, 0, nullptr));
  CHECK(cudaDeviceSynchronize());
  cudaStream_t stream = non_blocking_stream();
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  CHECK(cudaLaunchKernel((const void*)store_through, dim3(1), dim3(1), argv, 0, stream));
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 100; ++i) cudaGraphLaunch(exec, stream);  // past its first launches
  CHECK(cudaStreamSynchronize(stream));
  usleep(50000);                                                 // past the gate's linger
  for (int i = 0; i < 1000; ++i) cudaGraphLaunch(exec, stream);  // CUPTI detaches here
  CHECK(cudaStreamSynchronize(stream));

  int* bad = reinterpret_cast<int*>(0x10);
  CHECK(cudaMemcpy(slot, &bad, sizeof(int*), cudaMemcpyHostToDevice));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));  // expect: graph-replay-failed
  CHECK(cudaDeviceSynchronize());        // the same sticky error again: a consequence
  return 0;
}
