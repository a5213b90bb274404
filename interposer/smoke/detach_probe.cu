// Measurement probe for CUPTI's cost (not part of capguard): can a tool detach CUPTI while nothing
// needs it and attach again, mid-run, and what does each cost? Replay runs while attached (a
// subscriber with the runtime domain on) and after cuptiFinalize, alternating, in one process;
// the attach (cuptiSubscribe + enable) and detach (unsubscribe + finalize) are timed.
//   nvcc -O2 -o detach_probe detach_probe.cu -lcupti && ./detach_probe [rounds] [replays]
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

__global__ void empty_kernel() {}

double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

void CUPTIAPI callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

#define CHECK(call)                                                         \
  do {                                                                      \
    if ((call) != 0) {                                                      \
      std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call); \
      std::exit(2);                                                         \
    }                                                                       \
  } while (0)

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const int replays = argc > 2 ? std::atoi(argv[2]) : 20000;
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 20; ++i) empty_kernel<<<1, 1, 0, stream>>>();
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  auto replay_us = [&] {
    CHECK(cudaStreamSynchronize(stream));
    const double start = now_ms();
    for (int i = 0; i < replays; ++i) CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    return (now_ms() - start) * 1000.0 / replays;
  };
  replay_us();  // warm-up
  std::vector<double> detached, attached, attach_ms, detach_ms;
  for (int r = 0; r < rounds; ++r) {
    detached.push_back(replay_us());
    double t = now_ms();
    CUpti_SubscriberHandle subscriber;
    CHECK(cuptiSubscribe(&subscriber, &callback, nullptr));
    CHECK(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API));
    attach_ms.push_back(now_ms() - t);
    attached.push_back(replay_us());
    t = now_ms();
    CHECK(cuptiUnsubscribe(subscriber));
    CHECK(cuptiFinalize());
    detach_ms.push_back(now_ms() - t);
  }
  std::printf("detach-probe: replay us, detached %.3f attached %.3f (ratio %.3f)\n",
              median(detached), median(attached), median(attached) / median(detached));
  std::printf("detach-probe: attach %.2f ms (first %.2f), detach %.2f ms (first %.2f), %d rounds\n",
              median(attach_ms), attach_ms[0], median(detach_ms), detach_ms[0], rounds);
  for (int r = 0; r < rounds; ++r) {
    std::printf("detach-probe: round %d detached %.3f attached %.3f attach %.2f detach %.2f\n", r,
                detached[r], attached[r], attach_ms[r], detach_ms[r]);
  }
  return 0;
}
