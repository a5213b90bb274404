// Which of the driver calls the interposer makes from inside callbacks disturb a capture?
// Each step begins a Global capture, makes one call, and prints the capture status after it.
#include <cuda.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>

static int status_of(CUstream s) {
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  CUresult r = cuStreamGetCaptureInfo(s, &st, &id, nullptr, nullptr, nullptr, nullptr);
  return r == CUDA_SUCCESS ? static_cast<int>(st) : -static_cast<int>(r);
}

static void end(CUstream s, const char* what) {
  CUgraph g = nullptr;
  CUresult r = cuStreamEndCapture(s, &g);
  printf("  %-55s end -> %d\n", what, static_cast<int>(r));
}

int main() {
  cuInit(0);
  CUdevice dev;
  CUcontext ctx;
  cuDeviceGet(&dev, 0);
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  CUstream s, other;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&other, CU_STREAM_NON_BLOCKING);
  unsigned int flags = 0;

  cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
  printf("  capture info twice: status %d then %d\n", status_of(s), status_of(s));
  end(s, "cuStreamGetCaptureInfo only");

  cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
  CUresult r = cuStreamGetFlags(s, &flags);
  printf("  cuStreamGetFlags(capturing) -> %d flags %u, status %d\n", r, flags, status_of(s));
  end(s, "cuStreamGetFlags on the capturing stream");

  cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
  r = cuStreamGetFlags(other, &flags);
  printf("  cuStreamGetFlags(other) -> %d flags %u, status %d\n", r, flags, status_of(s));
  end(s, "cuStreamGetFlags on another stream, Global capture");

  cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED);
  r = cuStreamGetFlags(s, &flags);
  printf("  cuStreamGetFlags(capturing, relaxed) -> %d, status %d\n", r, status_of(s));
  end(s, "cuStreamGetFlags on the capturing stream, Relaxed");

  CUstreamCaptureStatus st;
  cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
  r = cuStreamIsCapturing(s, &st);
  printf("  cuStreamIsCapturing -> %d status %d, status %d\n", r, st, status_of(s));
  end(s, "cuStreamIsCapturing");

  CUcontext c2 = nullptr;
  cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
  r = cuStreamGetCtx(s, &c2);
  printf("  cuStreamGetCtx -> %d, status %d\n", r, status_of(s));
  end(s, "cuStreamGetCtx");

  unsigned long long sid = 0;
  cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
  r = cuStreamGetId(s, &sid);
  printf("  cuStreamGetId -> %d, status %d\n", r, status_of(s));
  end(s, "cuStreamGetId");

  // What a recorded event is made of, priced one part at a time.
  constexpr int kRounds = 10000;
  timespec a, b;
  auto ns_per = [&](const timespec& x, const timespec& y) {
    return ((y.tv_sec - x.tv_sec) * 1e9 + (y.tv_nsec - x.tv_nsec)) / kRounds;
  };
  cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < kRounds; ++i) status_of(s);
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("  cuStreamGetCaptureInfo during a capture: %.0f ns\n", ns_per(a, b));
  end(s, "timing");
  const int fd = open("/tmp/capguard-write-cost", O_CREAT | O_TRUNC | O_WRONLY | O_APPEND, 0644);
  const char line[] =
      "e 1 9f31cd3c7 24b cudaLaunchKernel 0 7 st=5572575e7670 sb=1 sa=1 ci=1 dm=0\n";
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < kRounds; ++i) {
    if (write(fd, line, sizeof(line) - 1) < 0) break;
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  close(fd);
  printf("  write(2) of one %zu-byte record: %.0f ns\n", sizeof(line) - 1, ns_per(a, b));
  return 0;
}
