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

#include "analyzer/analyzer.h"
#include "trace/writer.h"

namespace {

using capguard::trace::ApiEvent;
using capguard::trace::CaptureMode;
using capguard::trace::CaptureStatus;
using capguard::trace::Field;

struct SyntheticProgram {
  capguard::trace::TraceWriter writer;
  uint64_t seq = 0;
  uint64_t written = 0;
  uint64_t stacks[16][8] = {};
  bool stack_written[16] = {};

  void call(const char* api, uint64_t stream, int stack_slot, void (*fill)(ApiEvent&) = nullptr) {
    ApiEvent e;
    e.seq = ++seq;
    e.time_ns = seq * 100;
    e.tid = 1000;
    e.api = api;
    e.stack = static_cast<uint32_t>(stack_slot + 1);
    e.stream = stream;
    e.set(Field::Stream);
    if (fill) fill(e);
    const bool first = !stack_written[stack_slot];
    stack_written[stack_slot] = true;
    writer.write_event(e, first ? stacks[stack_slot] : nullptr, first ? 8 : 0);
    ++written;
  }
};

void captured(ApiEvent& e) {
  e.status_before = e.status_after = CaptureStatus::Active;
  e.set(Field::StatusBefore);
  e.set(Field::StatusAfter);
  e.capture_id = 7;
  e.set(Field::CaptureId);
}

uint64_t write_trace(const std::string& dir, uint64_t target_events) {
  SyntheticProgram p;
  for (int s = 0; s < 16; ++s)
    for (int f = 0; f < 8; ++f) p.stacks[s][f] = 0x400000 + s * 0x100 + f * 0x10;
  if (!p.writer.open(dir.c_str(), 4242, 1, 0)) {
    std::fprintf(stderr, "cannot create a trace in %s\n", dir.c_str());
    std::exit(2);
  }
  p.writer.write_command("synthetic training loop");
  p.writer.write_attach(true, "cupti");
  p.writer.write_module(0, 0x400000, 0x500000, "/synthetic/app", "");
  const uint64_t origin = 0x5000, side = 0x6000;
  while (p.written < target_events) {
    p.call("cudaStreamBeginCapture", origin, 0, [](ApiEvent& e) {
      e.mode = CaptureMode::Global;
      e.set(Field::Mode);
      e.stream_flags = 1;
      e.set(Field::StreamFlags);
    });
    p.call("cudaEventRecord", origin, 1, [](ApiEvent& e) {
      e.event = 0x7000;
      e.set(Field::Event);
      captured(e);
    });
    p.call("cudaStreamWaitEvent", side, 2, [](ApiEvent& e) {
      e.event = 0x7000;
      e.set(Field::Event);
    });
    for (int k = 0; k < 1000; ++k)
      p.call("cudaLaunchKernel", k % 4 ? origin : side, 3 + k % 8, captured);
    p.call("cudaEventRecord", side, 11, [](ApiEvent& e) {
      e.event = 0x7100;
      e.set(Field::Event);
      captured(e);
    });
    p.call("cudaStreamWaitEvent", origin, 12, [](ApiEvent& e) {
      e.event = 0x7100;
      e.set(Field::Event);
      captured(e);
    });
    p.call("cudaStreamEndCapture", origin, 13, [](ApiEvent& e) {
      e.graph = 0x9000;
      e.set(Field::Graph);
      e.nodes = 1000;
      e.set(Field::Nodes);
    });
    p.call("cudaGraphLaunch", origin, 14);
  }
  p.writer.write_end(p.seq * 100, 0);
  return p.written;
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
