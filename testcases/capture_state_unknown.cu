// capture-state-unknown: a capture the model saw no end of was over by a later call: what it made after its last known call is unknown
// TODO(add_rule.py): the smallest program that makes this mistake, the culprit call on
// the line that names the rule it expects (testcases/README.md: the conventions).
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  // TODO(add_rule.py): replace the placeholder below with the culprit call.
  LAUNCH_BUMP(args, stream);  // expect: capture-state-unknown
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  return 0;
}
