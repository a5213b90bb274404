// Graph coverage after warm-up: from the trace's launch counts ('n' records, format.h v9) and
// each exec's kernel nodes ('g' records), how many kernels ran inside graph replays and how many
// were launched eagerly, and where the eager ones came from (kernel and stack). Facts for the
// report's section and the gate (--min-graph-coverage); no judgement here.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>

#include "model/report.h"
#include "trace/graph_record.h"
#include "trace/kernel_record.h"

namespace capguard {

// The job's figure: every process's counts added up (a share of sums, never an average of shares,
// so a rank that ran 10 kernels weighs what it ran), for the report of several processes and the
// gate. Its eager sites stay each process's (none here); `measured` only if every one was; pid 0.
// Sums saturate: a node report read back may carry any numbers.
CoverageInfo job_coverage(std::span<const CoverageInfo> processes);

class GraphCoverage {
 public:
  void on_graph_node(const trace::GraphNodeRecord& record);
  void on_graph(const trace::GraphRecord& record);  // a walk's summary: an empty graph's only record
  void on_kernel_name(const trace::KernelNameRecord& record);
  void on_launch_count(const trace::LaunchCountRecord& record);
  // Whether the trace counted anything (a 'start' or 'blind' record, or counts).
  bool seen() const { return seen_; }
  // The process's coverage; `location` makes a report location of a stack id.
  CoverageInfo info(const std::function<Location(uint32_t stack)>& location) const;

 private:
  struct ExecKernels {
    uint64_t kernels = 0;
    uint32_t last_index = UINT32_MAX;  // UINT32_MAX: no node read
    bool walked_empty = false;         // walked, and it has no node
    bool walked() const { return last_index != UINT32_MAX || walked_empty; }
  };
  struct SiteKey {
    uint64_t function = 0;
    uint32_t stack = 0;
    bool operator==(const SiteKey&) const = default;
  };
  struct SiteKeyHash {
    size_t operator()(const SiteKey& k) const {
      return static_cast<size_t>((k.function ^ (uint64_t{k.stack} << 40)) * 0x9e3779b97f4a7c15ull);
    }
  };
  struct SiteCounts {
    uint64_t launches = 0, threads = 0, phases = 0;
  };
  // Bounds a damaged trace cannot push memory past: execs and names live only as long as
  // distinct handles do; sites past the bound are summed.
  static constexpr size_t kMaxExecs = 100'000;
  static constexpr size_t kMaxNames = 65'536;
  static constexpr size_t kMaxSites = 4096;

  std::unordered_map<uint64_t, ExecKernels> execs_;
  std::unordered_map<uint64_t, std::string> names_;
  std::unordered_map<SiteKey, SiteCounts, SiteKeyHash> sites_;
  CoverageInfo totals_;  // everything but the sites
  bool seen_ = false;
};

}  // namespace capguard
