// capture-never-ended: the program returns from main with its capture still open (an early return
// on an error path, typically). Nothing fails; the graph simply never exists.
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));  // expect: capture-never-ended
  LAUNCH_BUMP(args, stream);
  std::puts("leaving without cudaStreamEndCapture");
  return 0;
}
