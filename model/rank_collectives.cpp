#include "model/rank_collectives.h"

#include <algorithm>
#include <charconv>

#include "trace/format.h"
#include "util/flat_map.h"

namespace capguard {

namespace {

bool identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

uint64_t hash_text(uint64_t hash, std::string_view text) {
  for (const char c : text) hash = mix_hash(hash ^ static_cast<unsigned char>(c));
  return mix_hash(hash ^ text.size());
}

}  // namespace

std::optional<std::string> nccl_collective(std::string_view name) {
  // A mangled name (_Z39ncclDevKernel_..._LL24ncclDevKernelArgs...) says its identifier's
  // length: the argument types that follow are identifier characters too.
  if (name.starts_with("_Z")) {
    size_t length = 0;
    const char* digits = name.data() + 2;
    const auto [end, error] = std::from_chars(digits, name.data() + name.size(), length);
    if (error != std::errc() || end == digits) return std::nullopt;
    const auto at = static_cast<size_t>(end - name.data());
    if (length > name.size() - at) return std::nullopt;
    name = name.substr(at, length);
  } else {
    size_t n = 0;
    while (n < name.size() && identifier_char(name[n])) ++n;
    name = name.substr(0, n);
  }
  for (const std::string_view prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    if (!name.starts_with(prefix)) continue;
    std::string_view rest = name.substr(prefix.size());
    if (rest.empty() || !std::all_of(rest.begin(), rest.end(), identifier_char))
      return std::nullopt;
    return std::string(rest.substr(0, kMaxCollectiveName));
  }
  return std::nullopt;
}

void RankCollectiveModel::on_instantiate(uint64_t exec) {
  if (auto it = execs_.find(exec); it != execs_.end()) {
    it->second = ExecEntry{};
    return;
  }
  if (execs_.size() < kMaxExecs) execs_.emplace(exec, ExecEntry{});
}

void RankCollectiveModel::on_graph_node(const trace::GraphNodeRecord& record) {
  auto it = execs_.find(record.exec);
  if (it == execs_.end()) {
    if (execs_.size() >= kMaxExecs) return;
    it = execs_.emplace(record.exec, ExecEntry{}).first;  // a trace without its instantiate
  }
  ExecEntry& exec = it->second;
  if (record.index == 0 && exec.next_index != 0) {  // walked again (after an update)
    exec.collectives.clear();
    exec.cut = false;
    exec.work = 0;
  }
  // A node with more refs than one record holds comes as several records of one index.
  if (record.index + 1 == exec.next_index && record.index != 0) return;
  exec.next_index = record.index + 1;
  uint64_t node = mix_hash((uint64_t{record.type} << 32) ^ record.depth);
  std::optional<std::string> collective;
  if (record.type == trace::kNodeKernel) collective = nccl_collective(record.name);
  if (collective) {
    // NCCL's grid is its channel count, which it picks per communicator: not the graph's shape.
    if (exec.collectives.size() < kMaxCollectivesPerGraph)
      exec.collectives.push_back(std::move(*collective));
    else
      exec.cut = true;
  } else {
    node = hash_text(node, record.name);
    for (uint32_t i = 0; i < record.geometry_count && i < trace::kMaxGeometry; ++i)
      node = mix_hash(node ^ record.geometry[i]);
  }
  exec.work = mix_hash(exec.work ^ node);
}

void RankCollectiveModel::on_walked(uint64_t exec_handle, uint64_t topology_hash, const Site& site,
                                    uint32_t site_stack) {
  const auto it = execs_.find(exec_handle);
  if (it == execs_.end()) return;
  ExecEntry& exec = it->second;
  exec.graph.reset();
  if (exec.collectives.empty()) return;
  const uint64_t key = mix_hash(exec.work ^ mix_hash(topology_hash));
  uint64_t identity = mix_hash(key ^ (uint64_t{site_stack} << 20));
  for (const std::string& c : exec.collectives) identity = hash_text(identity, c);
  const auto known = graph_index_.find(identity);
  if (known != graph_index_.end()) {
    const Graph& graph = graphs_[known->second];
    if (graph.key == key && graph.site_stack == site_stack &&
        graph.collectives == exec.collectives) {
      exec.graph = known->second;
      ++graphs_[known->second].execs;
      return;
    }
  }
  if (graphs_.size() >= kMaxCollectiveGraphs) return;
  exec.graph = static_cast<uint32_t>(graphs_.size());
  graphs_.push_back({site, site_stack, key, exec.collectives, exec.cut, 1});
  if (known == graph_index_.end()) graph_index_.emplace(identity, *exec.graph);
}

void RankCollectiveModel::on_launch(uint64_t exec_handle, uint64_t stream, uint64_t seq) {
  const auto it = execs_.find(exec_handle);
  if (it == execs_.end() || !it->second.graph) return;
  ExecEntry& exec = it->second;
  const uint32_t graph = *exec.graph;
  // Every trace records an exec's first launches; later ones only sometimes (an exec a free
  // touched): kept to those, two ranks that replayed alike have the same list.
  if (exec.launches++ < trace::kRecordedFirstLaunches) {
    if (replays_.size() < kMaxReplaysKept)
      replays_.push_back(graph);
    else
      replays_cut_ = true;
  }
  for (StreamReplay& last : last_)
    if (last.stream == stream) {
      last.graph = graph;
      last.launch = seq;
      return;
    }
  if (last_.size() < kMaxReplayStreams) last_.push_back({stream, graph, seq});
}

RankCollectives RankCollectiveModel::info(
    const std::function<Location(const Site&)>& location) const {
  RankCollectives out;
  out.ended = ended_;
  for (const Graph& g : graphs_)
    out.graphs.push_back({location(g.site), g.key, g.collectives, g.cut, g.execs});
  out.replays = replays_;
  out.replays_cut = replays_cut_;
  out.last = last_;
  return out;
}

}  // namespace capguard
