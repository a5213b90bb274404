// GPU smoke scenarios for libcapguard.so, one per argv[1]; scripts/gpu_smoke.sh runs each
// under the interposer and prints the trace. Each scenario states what CUDA should answer.
#include <cuda_runtime.h>
#include <execinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

__global__ void touch(int* p) {
  if (p != nullptr) p[threadIdx.x] += 1;
}

#define SAY(call)                                                                    \
  do {                                                                               \
    cudaError_t e_ = (call);                                                         \
    printf("  %-60s -> %d %s\n", #call, static_cast<int>(e_), cudaGetErrorName(e_)); \
  } while (0)

static cudaStream_t nonblocking() {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  return s;
}

// Begin, two kernels, end, instantiate, launch: a correct capture.
static void good() {
  int* d;
  cudaMalloc(&d, 64 * sizeof(int));
  cudaStream_t s = nonblocking();
  cudaGraph_t g = nullptr;
  cudaGraphExec_t x = nullptr;
  SAY(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  touch<<<1, 32, 0, s>>>(d);
  touch<<<1, 32, 0, s>>>(d);
  SAY(cudaStreamEndCapture(s, &g));
  SAY(cudaGraphInstantiate(&x, g, 0));
  SAY(cudaGraphLaunch(x, s));
  SAY(cudaStreamSynchronize(s));
}

// Synchronous cudaMemcpy while a non-blocking stream captures: accepted, escapes the graph.
static void sync_copy() {
  int* d;
  int h[64] = {};
  cudaMalloc(&d, sizeof(h));
  cudaStream_t s = nonblocking();
  cudaGraph_t g = nullptr;
  SAY(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  touch<<<1, 32, 0, s>>>(d);
  SAY(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
  touch<<<1, 32, 0, s>>>(d);
  SAY(cudaStreamEndCapture(s, &g));
}

// cudaStreamSynchronize during capture: 900, then 901 for everything on the capture.
static void stream_sync() {
  int* d;
  cudaMalloc(&d, 64 * sizeof(int));
  cudaStream_t s = nonblocking();
  cudaGraph_t g = nullptr;
  SAY(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  touch<<<1, 32, 0, s>>>(d);
  SAY(cudaStreamSynchronize(s));
  touch<<<1, 32, 0, s>>>(d);
  SAY(cudaGetLastError());
  SAY(cudaStreamEndCapture(s, &g));
}

// Another thread allocates while this one captures in Global mode: 900 on the other thread.
static void other_thread_malloc() {
  cudaStream_t s = nonblocking();
  cudaGraph_t g = nullptr;
  int* d = nullptr;
  cudaMalloc(&d, 256);
  SAY(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  touch<<<1, 32, 0, s>>>(d);
  std::thread worker([] {
    void* p = nullptr;
    SAY(cudaMalloc(&p, 1024));
  });
  worker.join();
  SAY(cudaStreamEndCapture(s, &g));
}

// Mode exchange on this thread, then an allocation that Relaxed lets through.
static void exchange_mode() {
  cudaStream_t s = nonblocking();
  cudaGraph_t g = nullptr;
  SAY(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  SAY(cudaThreadExchangeStreamCaptureMode(&mode));
  printf("  previous mode %d\n", static_cast<int>(mode));
  void* p = nullptr;
  SAY(cudaMalloc(&p, 1024));
  SAY(cudaThreadExchangeStreamCaptureMode(&mode));
  touch<<<1, 32, 0, s>>>(nullptr);
  SAY(cudaStreamEndCapture(s, &g));
}

// A fork (the child must write its own trace, never into ours) and a second thread that
// launches work outside any capture.
static void fork_child() {
  cudaStream_t s = nonblocking();
  pid_t pid = fork();
  if (pid == 0) {
    cudaStream_t t;
    SAY(cudaStreamCreate(&t));  // CUDA is not usable after fork: an error, recorded in its trace
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  cudaGraph_t g = nullptr;
  SAY(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  SAY(cudaStreamEndCapture(s, &g));
}

// A bad call during capture, then abort(): the trace must still hold the culprit.
static void abort_after_bad_call() {
  cudaStream_t s = nonblocking();
  SAY(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  SAY(cudaDeviceSynchronize());
  fflush(stdout);
  abort();
}

// Cross-check against CUDA's own view, and a per-call cost figure: eager empty launches.
static void launch_loop(int n) {
  cudaStream_t s = nonblocking();
  touch<<<1, 1, 0, s>>>(nullptr);
  cudaStreamSynchronize(s);
  timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < n; ++i) touch<<<1, 1, 0, s>>>(nullptr);
  cudaStreamSynchronize(s);
  clock_gettime(CLOCK_MONOTONIC, &b);
  const double ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
  printf("  eager launch: %.0f ns per launch over %d\n", ns / n, n);
  cudaGraph_t g = nullptr;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < 1000; ++i) touch<<<1, 1, 0, s>>>(nullptr);
  clock_gettime(CLOCK_MONOTONIC, &b);
  cudaStreamEndCapture(s, &g);
  const double cns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
  printf("  captured launch: %.0f ns per launch over 1000\n", cns / 1000);
  void* frames[64];
  clock_gettime(CLOCK_MONOTONIC, &a);
  int depth = 0;
  for (int i = 0; i < 10000; ++i) depth = backtrace(frames, 64);
  clock_gettime(CLOCK_MONOTONIC, &b);
  const double bns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
  printf("  backtrace() of %d frames: %.0f ns\n", depth, bns / 10000);
}

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "good";
  printf("scenario %s\n", what);
  if (!strcmp(what, "launch_loop")) {
    launch_loop(argc > 2 ? atoi(argv[2]) : 20000);
    return 0;
  }
  const struct {
    const char* name;
    void (*run)();
  } scenarios[] = {
      {"good", good},
      {"sync_copy", sync_copy},
      {"stream_sync", stream_sync},
      {"other_thread_malloc", other_thread_malloc},
      {"exchange_mode", exchange_mode},
      {"fork", fork_child},
      {"abort", abort_after_bad_call},
  };
  for (const auto& scenario : scenarios) {
    if (!strcmp(what, scenario.name)) {
      scenario.run();
      return 0;
    }
  }
  return 2;
}
