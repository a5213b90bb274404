// A CUPTI client that tears CUPTI down the way PyTorch's profiler does (cuptiUnsubscribe, then
// cuptiFinalize), and afterwards a capture with a cudaStreamSynchronize inside, which CUDA
// rejects (900). capguard must keep its own subscription through the client's cuptiFinalize and
// still name the synchronize; the client must get exactly its callbacks (exit 1 otherwise).
// Twin: cupti_client_ok.
#include "libs/cupti_client.h"

int main() {
  int* data = device_buffer();
  BumpArgs args(data);
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  CuptiClient client;
  if (!client.subscribe()) return 1;
  client.enable_launches(true);
  for (int i = 0; i < 6; ++i) LAUNCH_BUMP(args, stream);
  CHECK(cudaStreamSynchronize(stream));
  const bool ok = client.expect("launches enabled", 6, 0);
  client.unsubscribe();
  LIB_CHECK(cuptiFinalize());

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  LAUNCH_BUMP(args, stream);
  CHECK(cudaStreamSynchronize(stream));  // expect: sync-during-capture
  end_and_replay(stream);

  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(data));
  std::printf("client: %s\n", ok ? "every count as expected" : "COUNTS DIFFER");
  return ok ? 0 : 1;
}
