// Writes the trace of a training loop that re-captures its step every iteration: STEPS clean
// captures of 8 events each (begin, fork, side-stream kernel, join, end, graph launch), as
// `capguard.4242.trace` in DIR. bench/analyzer_memory.py times `capguard report` on it.
//
//     bench_analyzer_memory_trace STEPS DIR      # 2.5M steps: 20M events
#include <cstdio>
#include <cstdlib>

#include "bench/synthetic_trace.h"

using namespace capguard::bench;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s STEPS DIR\n", argv[0]);
    return 2;
  }
  const uint64_t steps = std::strtoull(argv[1], nullptr, 10);
  SyntheticTrace p(argv[2], "synthetic training loop", 8, 12);
  const uint64_t origin = 0x5000, side = 0x6000;
  for (uint64_t step = 0; step < steps; ++step) {
    p.call("cudaStreamBeginCapture", origin, 0, begin_global_on_non_blocking);
    p.call("cudaEventRecord", origin, 1, on_event<0x7000, true>);
    p.call("cudaStreamWaitEvent", side, 2, on_event<0x7000, false>);  // fork
    p.call("cudaLaunchKernel", side, 3, in_capture);
    p.call("cudaEventRecord", side, 4, on_event<0x7100, true>);
    p.call("cudaStreamWaitEvent", origin, 5, on_event<0x7100, true>);  // join
    p.call("cudaStreamEndCapture", origin, 6, ends_with_nodes<4>);
    p.call("cudaGraphLaunch", origin, 7);
  }
  p.end();
  std::printf("%llu events\n", static_cast<unsigned long long>(p.events()));
  return 0;
}
