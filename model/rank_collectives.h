// NCCL collectives inside CUDA graphs, per process: which collective kernels each instantiated
// graph holds (from the walk's 'g' records), and the order in which the process replayed those
// graphs (its recorded graph launches). Facts for rules/rank_collective_mismatch.cpp, which
// compares the ranks of a job; nothing is judged here.
//
// A collective is named by its NCCL kernel: ncclDevKernel_AllReduce_Sum_f32_RING_LL (NCCL 2.19
// on: collective, reduction, data type, algorithm, protocol),
// ncclKernel_AllReduce_RING_LL_Sum_float (before), ncclDevKernel_SendRecv, ncclDevKernel_Generic
// (the collective is in its arguments, not its name). The element count is not read: NCCL passes it
// inside a by-value argument struct of kilobytes, which the walk does not record (it keeps scalars
// of at most 8 bytes).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/capture_model.h"
#include "model/report.h"
#include "trace/format.h"
#include "trace/graph_record.h"

namespace capguard {

// The collective an NCCL kernel runs, from its driver (mangled) or plain name: the part after
// ncclDevKernel_/ncclKernel_ ("AllReduce_Sum_f32_RING_LL"); nullopt for any other kernel.
std::optional<std::string> nccl_collective(std::string_view kernel_name);

// The launches of each exec every trace records (the replays RankCollectives lists).
inline constexpr uint32_t kRecordedLaunchesPerExec = trace::kRecordedFirstLaunches;

class RankCollectiveModel {
 public:
  // An exec was instantiated (a handle seen again is a new exec).
  void on_instantiate(uint64_t exec);
  void on_graph_node(const trace::GraphNodeRecord& record);
  // The exec's walk ended ('G'); `site` is where its capture began (or its instantiate), and
  // `site_stack` the id that stands for all stacks of that content.
  void on_walked(uint64_t exec, uint64_t topology_hash, const Site& site, uint32_t site_stack);
  // A graph launch outside captures, recorded in the trace.
  void on_launch(uint64_t exec, uint64_t stream, uint64_t seq);
  void on_end() { ended_ = true; }
  // Whether any walked graph held a collective.
  bool any() const { return !graphs_.empty(); }
  RankCollectives info(const std::function<Location(const Site&)>& location) const;

 private:
  struct ExecEntry {
    std::vector<std::string> collectives;  // while walked, in walk order
    bool cut = false;
    uint64_t work = 0;  // hash of what is not a collective, node by node
    uint32_t next_index = 0;
    std::optional<uint32_t> graph;  // index into graphs_ once walked, if it holds collectives
    uint32_t launches = 0;          // recorded launches
  };
  struct Graph {
    Site site;
    uint32_t site_stack = 0;
    uint64_t key = 0;
    std::vector<std::string> collectives;
    bool cut = false;
    uint64_t execs = 0;
  };
  // Bounds a damaged trace cannot push memory past (the report's kMax... bound the rest).
  static constexpr size_t kMaxExecs = 100'000;

  std::unordered_map<uint64_t, ExecEntry> execs_;
  std::vector<Graph> graphs_;
  std::unordered_map<uint64_t, uint32_t> graph_index_;  // (site, key, collectives) hash
  std::vector<uint32_t> replays_;
  bool replays_cut_ = false;
  std::vector<StreamReplay> last_;
  bool ended_ = false;
};

}  // namespace capguard
