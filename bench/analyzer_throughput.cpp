// Analyzer throughput on one core: writes a large synthetic trace shaped like a training loop
// (captures of many kernels, forks and joins, eager work between them), then times
// analyze_trace() on it. Prints events/s and peak RSS; run at two sizes to show that memory is
// bounded by live state, not trace length. Target: >= 5 million events/s.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/analyzer.h"
#include "bench/synthetic_trace.h"

namespace {

using namespace capguard::bench;

uint64_t write_trace(const std::string& dir, uint64_t target_events) {
  SyntheticTrace p(dir.c_str(), "synthetic training loop", 16, 8);
  const uint64_t origin = 0x5000, side = 0x6000;
  while (p.events() < target_events) {
    p.call("cudaStreamBeginCapture", origin, 0, begin_global_on_non_blocking);
    p.call("cudaEventRecord", origin, 1, on_event<0x7000, true>);
    p.call("cudaStreamWaitEvent", side, 2, on_event<0x7000, false>);
    for (int k = 0; k < 1000; ++k)
      p.call("cudaLaunchKernel", k % 4 ? origin : side, 3 + k % 8, in_capture);
    p.call("cudaEventRecord", side, 11, on_event<0x7100, true>);
    p.call("cudaStreamWaitEvent", origin, 12, on_event<0x7100, true>);
    p.call("cudaStreamEndCapture", origin, 13, ends_with_nodes<1000>);
    p.call("cudaGraphLaunch", origin, 14);
  }
  p.end();
  return p.events();
}

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t events = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 5'000'000;
  char dir[] = "/tmp/capguard-bench-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  const uint64_t written = write_trace(dir, events);
  const long rss_before = peak_rss_kib();

  capguard::Analysis analysis;
  const std::string path = std::string(dir) + "/capguard.4242.trace";
  const auto start = std::chrono::steady_clock::now();
  capguard::analyze_trace(path, analysis);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  for (const auto& error : analysis.errors) std::fprintf(stderr, "%s\n", error.to_string().c_str());
  std::printf("metric analyzer_throughput %.4g Mevents/s\n",
              static_cast<double>(written) / elapsed / 1e6);
  std::printf("metric analyzer_events %llu events\n", static_cast<unsigned long long>(written));
  std::printf("metric analyzer_captures %llu captures\n",
              static_cast<unsigned long long>(analysis.report.capture_count()));
  std::printf("metric analyzer_findings %zu findings\n", analysis.report.findings.size());
  std::printf("metric analyzer_peak_rss_growth %ld KiB\n", peak_rss_kib() - rss_before);
  unlink(path.c_str());
  rmdir(dir);
  return analysis.errors.empty() ? 0 : 1;
}
