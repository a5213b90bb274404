// A Relaxed capture whose origin stream is destroyed before any EndCapture (a test
// suite's error test that leaves its capture to the stream's destructor). The capture ends with
// its stream, no graph made (unmeasured: CUDA's answer to the destroy). The thread's later work
// on another stream and its cudaMalloc belong to no capture: nothing is reported (capguard used
// to keep the capture open: capture-never-ended at exit, and escapes against it before that).
#include "common.h"

int main() {
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  cudaStream_t later = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
  LAUNCH_BUMP(args, stream);
  CHECK(cudaStreamDestroy(stream));  // the capture ends with its stream

  for (int i = 0; i < 7; ++i) LAUNCH_BUMP(args, later);
  int* scratch = nullptr;
  CHECK(cudaMalloc(&scratch, 1 << 20));
  CHECK(cudaStreamSynchronize(later));
  CHECK(cudaFree(scratch));
  CHECK(cudaStreamDestroy(later));
  return 0;
}
