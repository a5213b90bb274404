// replay-after-free, the quiet variant: the freed buffer's address is handed to the next
// cudaMalloc (measured on the H100: same address), so the replay writes into another buffer.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));

  int* old_address = args.data;
  CHECK(cudaFree(args.data));
  int* other = nullptr;
  CHECK(cudaMalloc(&other, kBytes));
  std::printf("freed %p, new allocation %p\n", (void*)old_address, (void*)other);
  CHECK(cudaGraphLaunch(exec, stream));  // expect: replay-after-free
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaFree(other));
  return 0;
}
