// Analyzer throughput: writes a large synthetic trace shaped like a training loop (captures of
// many kernels, forks and joins, eager work between them), then times analyze_trace() on it, on
// the CPUs it may use (under `taskset -c N`: one core, no parse-ahead helpers). Prints events/s
// and peak RSS; run at two sizes to show that memory is bounded by live state, not trace length.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "bench/synthetic_trace.h"
#include "engine/analyzer.h"
#include "trace/parse_ahead.h"
#include "trace/reader.h"

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

uint64_t count_lines(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) return 0;
  uint64_t lines = 0;
  char buffer[1 << 16];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) {
    for (size_t i = 0; i < got; ++i) lines += buffer[i] == '\n';
  }
  std::fclose(file);
  return lines;
}

// CPU time of this process: on a shared machine, a rate per CPU second drifts less than one per
// wall second.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// Only the first stages of the analysis, to split an event's time on a machine without a
// profiler: `read` is the read(2)s alone (the kernel's copy out of the page cache), `parse` the
// reader with a sink that does nothing (with helpers as analyze_trace() has them: their rate),
// `analyze` (the default) all of analyze_trace().
enum class Stage { Read, Parse, Analyze };

double run_stage(Stage stage, const std::string& path, capguard::Analysis& analysis) {
  const double cpu_start = cpu_seconds();
  if (stage == Stage::Read) {
    std::vector<char> buffer(256 * 1024);
    const int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) std::perror(path.c_str());
    while (fd >= 0 && read(fd, buffer.data(), buffer.size()) > 0) {
    }
    if (fd >= 0) close(fd);
  } else if (stage == Stage::Parse) {
    capguard::trace::TraceSink nothing;
    if (auto error = capguard::trace::read_loop::read_file(
            path, nothing, capguard::trace::ReadThreads::sharing_cpus()))
      std::fprintf(stderr, "%s\n", error->to_string().c_str());
  } else {
    capguard::analyze_trace(path, analysis);
  }
  return cpu_seconds() - cpu_start;
}

}  // namespace

// bench_analyzer_throughput [EVENTS] writes, times and removes its trace;
// bench_analyzer_throughput --keep DIR [EVENTS] writes it into DIR and keeps it, and
// bench_analyzer_throughput --read TRACE [read|parse|analyze] [ROUNDS] times an existing one
// (for a profiler: analysis only; a small trace read in rounds stays in the CPU's caches).
int main(int argc, char** argv) {
  const std::string option = argc > 2 ? argv[1] : "";
  const bool keep = option == "--keep", read_only = option == "--read";
  const char* count =
      keep ? (argc > 3 ? argv[3] : nullptr) : (!read_only && argc > 1 ? argv[1] : nullptr);
  const uint64_t events = count != nullptr ? std::strtoull(count, nullptr, 10) : 5'000'000;
  const std::string stage_name = read_only && argc > 3 ? argv[3] : "analyze";
  if (stage_name != "read" && stage_name != "parse" && stage_name != "analyze") {
    std::fprintf(stderr, "unknown stage '%s' (read, parse or analyze)\n", stage_name.c_str());
    return 2;
  }
  const Stage stage = stage_name == "read"    ? Stage::Read
                      : stage_name == "parse" ? Stage::Parse
                                              : Stage::Analyze;
  const int rounds = read_only && argc > 4 ? std::max(1, std::atoi(argv[4])) : 1;
  char temp_dir[] = "/tmp/capguard-bench-XXXXXX";
  std::string dir = keep ? argv[2] : "";
  std::string path = read_only ? argv[2] : "";
  uint64_t written = 0;
  if (!read_only) {
    if (!keep && !mkdtemp(temp_dir)) return 2;
    if (!keep) dir = temp_dir;
    written = write_trace(dir, events);
    path = dir + "/capguard.4242.trace";
  }
  if (read_only) written = count_lines(path);  // one event a line, near enough for a rate
  const long rss_before = peak_rss_kib();

  capguard::Analysis analysis;
  const auto start = std::chrono::steady_clock::now();
  double cpu = 0;
  for (int round = 0; round < rounds; ++round) {
    analysis = capguard::Analysis{};
    cpu += run_stage(stage, path, analysis);
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double total = static_cast<double>(written) * rounds;

  for (const auto& error : analysis.errors) std::fprintf(stderr, "%s\n", error.to_string().c_str());
  if (stage != Stage::Analyze) std::printf("stage %s, %d rounds\n", stage_name.c_str(), rounds);
  std::printf("metric analyzer_throughput %.4g Mevents/s\n", total / elapsed / 1e6);
  std::printf("metric analyzer_cpu_throughput %.4g Mevents/s\n", total / cpu / 1e6);
  std::printf("metric analyzer_ns_per_event %.4g ns\n", cpu / total * 1e9);
  std::printf("metric analyzer_events %llu events\n", static_cast<unsigned long long>(written));
  std::printf("metric analyzer_captures %llu captures\n",
              static_cast<unsigned long long>(analysis.report.capture_count()));
  std::printf("metric analyzer_findings %zu findings\n", analysis.report.findings.size());
  std::printf("metric analyzer_peak_rss_growth %ld KiB\n", peak_rss_kib() - rss_before);
  if (!keep && !read_only) {
    unlink(path.c_str());
    rmdir(dir.c_str());
  }
  return analysis.errors.empty() ? 0 : 1;
}
