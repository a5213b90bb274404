// The program is a CUPTI client itself (a profiler's callbacks, cupti_client.h) and captures a
// graph correctly while subscribed. It counts the callbacks it enabled, through capguard's
// switching of its own callbacks on for the capture and off after it, and exits 1 if any count
// differs from what it made. Natively and under capguard alike: exactly its own callbacks.
// Twin: cupti_client_sync_in_capture.
#include "libs/cupti_client.h"

int main() {
  int* data = device_buffer();
  BumpArgs args(data);
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();
  CuptiClient client;
  if (!client.subscribe()) return 1;
  CuptiClient::try_second();
  bool ok = true;

  client.enable_launches(true);  // one callback id
  for (int i = 0; i < 10; ++i) LAUNCH_BUMP(args, stream);
  CHECK(cudaStreamSynchronize(stream));
  ok &= client.expect("launches enabled", 10, 0);

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 3; ++i) LAUNCH_BUMP(args, stream);
  end_and_replay(stream);
  pause_past_linger();
  CHECK(cudaStreamSynchronize(stream));  // an EXIT after the linger: capguard reduces here
  for (int i = 0; i < 4; ++i) LAUNCH_BUMP(args, stream);
  CHECK(cudaDeviceSynchronize());
  ok &= client.expect("a capture, then after capguard reduced", 7, 0);

  client.enable_runtime(true);  // the whole domain
  for (int i = 0; i < 2; ++i) LAUNCH_BUMP(args, stream);
  CHECK(cudaDeviceSynchronize());
  ok &= client.expect("runtime domain enabled", 2, 1);

  client.enable_runtime(false);  // off again, launches included
  for (int i = 0; i < 5; ++i) LAUNCH_BUMP(args, stream);
  CHECK(cudaDeviceSynchronize());
  ok &= client.expect("runtime domain disabled", 0, 0);
  client.unsubscribe();

  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(data));
  std::printf("client: %s\n", ok ? "every count as expected" : "COUNTS DIFFER");
  return ok ? 0 : 1;
}
