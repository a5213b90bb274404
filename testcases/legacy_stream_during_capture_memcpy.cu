// legacy-stream-during-capture: a synchronous cudaMemcpy (which runs on the legacy stream) while
// a blocking stream captures: 906, capture invalidated. With a non-blocking capture stream the
// same call succeeds and escapes the graph instead (see escaped_sync_copy).
#include "common.h"

static int host_input[kThreads];

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreate(&stream));

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  CHECK(cudaMemcpy(args.data, host_input, kBytes, cudaMemcpyHostToDevice));  // expect: legacy-stream-during-capture
  LAUNCH_BUMP(args, stream);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  discard(graph);
  return 0;
}
