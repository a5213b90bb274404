// rank-collective-mismatch: the ranks of one job hold, or replay, graphs whose NCCL collectives
// differ. NCCL inside a graph waits for the same collective on every rank of the communicator:
// a rank that replays another sequence hangs the job at 100% GPU, with no error, until a
// watchdog kills it (nccl#2351, pegainfer#498, pie#499).
#include "rules/rank_collective_mismatch.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "model/rank_collectives.h"
#include "rules/rule.h"

namespace capguard::rules {

extern const Rule kRankCollectiveMismatch;
constinit const Rule kRankCollectiveMismatch{
    RuleId::kRankCollectiveMismatch,
    {"Every rank of a communicator must run the same NCCL collectives in the same order. A graph\n"
     "that holds collectives replays them as they were captured, so ranks that captured\n"
     "different graphs (one rank captured a batch size the others did not, a conditional path\n"
     "differed, a communicator was split differently), or that replay their graphs in\n"
     "different orders, wait on each other forever: the job hangs at 100% GPU with no error\n"
     "until a timeout or NCCL's watchdog kills it, hours later.\n"
     "\n"
     "    sizes = [8, 16] if rank == 1 else [16]\n"
     "    for bs in sizes:\n"
     "        with torch.cuda.graph(graphs[bs]):   # rank 1 captures one graph more\n"
     "            dist.all_reduce(buf[:bs])\n"
     "    graphs[batch_size_of(rank)].replay()   # rank 1 replays bs 8, rank 0 bs 16: hang\n"
     "\n"
     "capguard compares the ranks of one job (the processes a launcher gave a rank, of one\n"
     "world size; the communicator itself is not visible, so all of them) where every rank's\n"
     "trace or node report is together: each graph's NCCL kernels in node order\n"
     "(ncclDevKernel_AllReduce_Sum_f32_RING_LL: collective, reduction, type, algorithm,\n"
     "protocol; the element count is not recorded), the graph's other work, its capture's line,\n"
     "and each exec's first recorded launches. It says:\n"
     "  - ranks that captured the same graph at one line with other collectives (the first\n"
     "    that differs);\n"
     "  - a graph at one line that some ranks captured and others never did;\n"
     "  - the first replay step where the ranks' replays part, and what each replayed;\n"
     "  - for a job killed while replaying (traces without their end), the graph each rank\n"
     "    launched last.\n"
     "Ranks that captured nothing with NCCL, or at lines no other rank captured at (pipeline\n"
     "stages running other code), are not compared.\n"
     "\n"
     "Fix: make every rank capture the same graphs (the same batch sizes, the same branches,\n"
     "decided from values all ranks agree on) and replay them in the same order; where ranks\n"
     "must differ, give them different communicators.",
     "capture the same graphs on every rank, from values all ranks agree on, and replay them "
     "in the same order"},
    nullptr,
    nullptr,
    nullptr};

namespace {

constexpr size_t kMaxFindingsPerJob = 64;  // a damaged or hostile job cannot flood the report
constexpr size_t kRangesNamed = 6;
constexpr size_t kCollectivesNamed = 4;

// "rank 1", "ranks 0-2", "ranks 0, 3-5, 9 and 4 more" (ranks ascending, distinct).
std::string ranks_text(const std::vector<uint32_t>& ranks) {
  std::vector<std::pair<uint32_t, uint32_t>> runs;
  for (uint32_t r : ranks) {
    if (!runs.empty() && runs.back().second + 1 == r)
      runs.back().second = r;
    else
      runs.push_back({r, r});
  }
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < runs.size() && i < kRangesNamed; ++i) {
    if (i != 0) out += ", ";
    out += runs[i].first == runs[i].second ? fmt::format("{}", runs[i].first)
                                           : fmt::format("{}-{}", runs[i].first, runs[i].second);
  }
  if (runs.size() > kRangesNamed) {
    size_t more = 0;
    for (size_t i = kRangesNamed; i < runs.size(); ++i) more += runs[i].second - runs[i].first + 1;
    out += fmt::format(" and {} more", more);
  }
  return out;
}

std::string site_label(const Location& site) {
  const Frame* frame = site.line_frame();
  return frame != nullptr ? fmt::format("{}:{}", frame->file, frame->line)
                          : std::string("a line capguard could not name");
}

std::string collectives_text(const CollectiveGraph& graph) {
  const size_t n = graph.collectives.size();
  std::string out = fmt::format("{} collective{}{}: ", n, n == 1 ? "" : "s",
                                graph.collectives_cut ? " or more" : "");
  for (size_t i = 0; i < n && i < kCollectivesNamed; ++i)
    out += (i != 0 ? ", " : "") + graph.collectives[i];
  if (n > kCollectivesNamed) out += ", ...";
  return out;
}

// Where two graphs' collective lists part: "collective 2 is AllGather_f32_RING_LL there, and
// AllReduce_Sum_f32_RING_LL here"; when they are one list, the graphs differ around it.
std::string first_difference(const CollectiveGraph& theirs, const std::string& their_ranks,
                             const CollectiveGraph& ours, const std::string& our_ranks) {
  const auto& a = theirs.collectives;
  const auto& b = ours.collectives;
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  if (i == a.size() && i == b.size())
    return fmt::format(
        "both hold {} (the element counts, which capguard does not record, or the "
        "work around them differ)",
        collectives_text(ours));
  const auto at = [](const std::vector<std::string>& list, size_t k) {
    return k < list.size() ? list[k] : std::string("none");
  };
  return fmt::format("the first collective that differs is collective {}: {} on {}, {} on {}",
                     i + 1, at(a, i), their_ranks, at(b, i), our_ranks);
}

struct Rank {
  uint32_t rank = 0;
  const RankCollectives* facts = nullptr;
  std::vector<std::string> site;   // per graph: its capture's line
  std::vector<uint32_t> shape;     // per graph: (line, key) interned
  std::vector<uint32_t> identity;  // per graph: (line, key, collectives) interned
};

class Job {
 public:
  Job(std::vector<Rank> ranks, std::vector<Finding>& out) : ranks_(std::move(ranks)), out_(out) {
    std::sort(ranks_.begin(), ranks_.end(),
              [](const Rank& a, const Rank& b) { return a.rank < b.rank; });
    for (Rank& r : ranks_) {
      for (const CollectiveGraph& g : r.facts->graphs) {
        r.site.push_back(site_label(g.site));
        std::string shape = r.site.back() + fmt::format("|{:x}", g.key);
        r.shape.push_back(intern(shapes_, shape));
        for (const std::string& c : g.collectives) shape += "|" + c;
        r.identity.push_back(intern(identities_, shape));
      }
    }
  }

  void judge() {
    judge_captures();
    judge_replays();
    judge_killed();
  }

 private:
  static uint32_t intern(std::unordered_map<std::string, uint32_t>& table, const std::string& s) {
    return table.emplace(s, static_cast<uint32_t>(table.size())).first->second;
  }
  const CollectiveGraph& graph(const Rank& r, size_t index) const { return r.facts->graphs[index]; }
  std::string describe(const Rank& r, size_t index) const {
    return fmt::format("the graph captured at {} ({})", r.site[index],
                       collectives_text(graph(r, index)));
  }
  bool full() const { return out_.size() >= kMaxFindingsPerJob; }

  void emit(const Rank& culprit, size_t graph_index, const char* api, std::string message,
            const Rank* other, size_t other_graph) {
    if (full()) return;
    const RuleInfo info = kRankCollectiveMismatch.info();
    Finding f;
    f.rule = std::string(info.id);
    f.severity = info.severity;
    f.pid = culprit.facts->pid;
    f.process = culprit.facts->process;
    f.api = api;
    f.message = std::move(message);
    f.location = graph(culprit, graph_index).site;
    if (other != nullptr)
      f.related.push_back({"other-rank", fmt::format("rank {}'s graph", other->rank),
                           graph(*other, other_graph).site});
    out_.push_back(std::move(f));
  }

  // What one rank holds or replays: its graph, and the value ranks are compared by.
  struct Entry {
    size_t rank = 0;  // index into ranks_
    size_t graph = 0;
    uint32_t value = 0;
  };
  // Entries grouped by value; the largest group (ties: the lowest rank's) is the reference.
  static std::vector<std::vector<Entry>> groups_by(const std::vector<Entry>& entries) {
    std::map<uint32_t, std::vector<Entry>> by;
    for (const Entry& e : entries) by[e.value].push_back(e);
    std::vector<std::vector<Entry>> groups;
    for (auto& [value, members] : by) groups.push_back(std::move(members));
    std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
      return a.size() != b.size() ? a.size() > b.size() : a.front().rank < b.front().rank;
    });
    return groups;
  }
  std::string ranks_of(const std::vector<Entry>& members) const {
    std::vector<uint32_t> ranks;
    for (const Entry& m : members) ranks.push_back(ranks_[m.rank].rank);
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    return ranks_text(ranks);
  }
  std::string ranks_of(const std::vector<size_t>& members) const {
    std::vector<uint32_t> ranks;
    for (size_t m : members) ranks.push_back(ranks_[m].rank);
    return ranks_text(ranks);
  }
  // One finding per group besides the reference: `words` says it, given (theirs, ours).
  template <class Words>
  void emit_groups(const std::vector<std::vector<Entry>>& groups, const char* api, Words&& words) {
    for (size_t k = 1; k < groups.size(); ++k) {
      const Entry& theirs = groups[k].front();
      const Entry& ours = groups[0].front();
      const std::string their_ranks = ranks_of(groups[k]), our_ranks = ranks_of(groups[0]);
      emit(ranks_[theirs.rank], theirs.graph, api,
           words(theirs, their_ranks, groups[k].size(), ours, our_ranks, groups[0].size()) + "; " +
               first_difference(graph(ranks_[theirs.rank], theirs.graph), their_ranks,
                                graph(ranks_[ours.rank], ours.graph), our_ranks),
           &ranks_[ours.rank], ours.graph);
    }
  }

  void judge_captures() {
    // Per capture line: the ranks that captured graphs with collectives there.
    std::map<std::string, std::vector<size_t>> participants;
    // Per (line, key): each rank's first graph of that shape, by its collectives.
    std::map<uint32_t, std::vector<std::pair<size_t, size_t>>> holders;  // (rank, graph)
    for (size_t i = 0; i < ranks_.size(); ++i) {
      const Rank& r = ranks_[i];
      for (size_t g = 0; g < r.shape.size(); ++g) {
        auto& at = participants[r.site[g]];
        if (at.empty() || at.back() != i) at.push_back(i);
        auto& held = holders[r.shape[g]];
        const bool again = std::any_of(held.begin(), held.end(), [&](const auto& h) {
          return h.first == i && r.identity[h.second] == r.identity[g];
        });
        if (!again) held.push_back({i, g});
      }
    }
    // Fewer ranks hold it than not; half of them when the lowest rank is not among them (two
    // ranks, each with a graph the other lacks: the lowest rank's is the reference).
    const auto minority = [](size_t holding, bool lowest_holds, size_t all) {
      return holding * 2 < all || (holding * 2 == all && !lowest_holds);
    };
    // The (rank, line) pairs where a rank captured a graph most ranks of the line never did:
    // that rank's "never captured the others' graph" is the same mistake, said once.
    std::set<std::pair<size_t, std::string>> own_graph;
    for (const auto& [shape, held] : holders) {
      const std::string& line = ranks_[held.front().first].site[held.front().second];
      std::set<size_t> holding;
      for (const auto& h : held) holding.insert(h.first);
      const std::vector<size_t>& all = participants[line];
      if (minority(holding.size(), holding.contains(all.front()), all.size()))
        for (size_t i : holding) own_graph.insert({i, line});
    }
    for (const auto& [shape, held] : holders) {
      const Rank& first = ranks_[held.front().first];
      const std::string& line = first.site[held.front().second];
      const std::vector<size_t>& all = participants[line];
      if (all.size() < 2) continue;
      // The same graph, other collectives.
      std::vector<Entry> by_identity;
      std::vector<size_t> holding;
      for (const auto& [i, g] : held) {
        by_identity.push_back({i, g, ranks_[i].identity[g]});
        if (holding.empty() || holding.back() != i) holding.push_back(i);
      }
      emit_groups(groups_by(by_identity), "cudaStreamBeginCapture",
                  [&](const Entry&, const std::string& their_ranks, size_t, const Entry&,
                      const std::string& our_ranks, size_t) {
                    return fmt::format(
                        "{} captured the graph at {} with other NCCL collectives than {}: "
                        "replayed together, the ranks wait on each other's collectives and the "
                        "job hangs",
                        their_ranks, line, our_ranks);
                  });
      if (holding.size() == all.size()) continue;
      // Some ranks captured this graph at the line, others never did.
      std::vector<size_t> missing;
      std::set_difference(all.begin(), all.end(), holding.begin(), holding.end(),
                          std::back_inserter(missing));
      const bool majority = !minority(holding.size(), holding.front() == all.front(), all.size());
      if (majority) std::erase_if(missing, [&](size_t i) { return own_graph.contains({i, line}); });
      if (missing.empty()) continue;
      const Rank& holder = ranks_[holding.front()];
      const size_t holder_graph = held.front().second;
      const Rank& absent = ranks_[missing.front()];
      size_t absent_graph = 0;
      while (absent_graph < absent.site.size() && absent.site[absent_graph] != line) ++absent_graph;
      if (!majority) {
        emit(holder, holder_graph, "cudaStreamBeginCapture",
             fmt::format("{} captured a graph at {} that {} never captured ({}): replaying it, "
                         "{} wait for collectives the other ranks never run, and the job hangs",
                         ranks_of(holding), line, ranks_of(missing),
                         collectives_text(graph(holder, holder_graph)),
                         holding.size() == 1 ? "it would" : "they would"),
             &absent, absent_graph);
      } else {
        emit(absent, absent_graph, "cudaStreamBeginCapture",
             fmt::format("{} never captured the graph at {} that {} captured ({}): where the "
                         "others replay it, {} run other collectives or none, and the job hangs",
                         ranks_of(missing), line, ranks_of(holding),
                         collectives_text(graph(holder, holder_graph)),
                         missing.size() == 1 ? "it runs" : "they run"),
             &holder, holder_graph);
      }
    }
  }

  void judge_replays() {
    size_t longest = 0;
    for (const Rank& r : ranks_) longest = std::max(longest, r.facts->replays.size());
    for (size_t step = 0; step < longest && !full(); ++step) {
      std::vector<Entry> at;
      for (size_t i = 0; i < ranks_.size(); ++i) {
        const RankCollectives& f = *ranks_[i].facts;
        if (step < f.replays.size() && f.replays[step] < ranks_[i].identity.size())
          at.push_back({i, f.replays[step], ranks_[i].identity[f.replays[step]]});
      }
      if (at.size() < 2) return;
      const auto groups = groups_by(at);
      if (groups.size() < 2) continue;
      emit_groups(
          groups, "cudaGraphLaunch",
          [&](const Entry& theirs, const std::string& their_ranks, size_t count, const Entry& ours,
              const std::string& our_ranks, size_t our_count) {
            return fmt::format(
                "the ranks' graph replays part at replay {} (counting the replays of "
                "graphs that hold collectives; capguard records each graph's first {} "
                "launches): {} {} {} while {} {} {}",
                step + 1, kRecordedLaunchesPerExec, their_ranks, count == 1 ? "replays" : "replay",
                describe(ranks_[theirs.rank], theirs.graph), our_ranks,
                our_count == 1 ? "replays" : "replay", describe(ranks_[ours.rank], ours.graph));
          });
      return;  // past the first step where they part, later steps say nothing more
    }
  }

  void judge_killed() {
    std::vector<Entry> last;  // each killed rank's last recorded launch
    for (size_t i = 0; i < ranks_.size(); ++i) {
      const RankCollectives& f = *ranks_[i].facts;
      if (f.ended || f.last.empty()) continue;
      const StreamReplay* latest = &f.last.front();
      for (const StreamReplay& s : f.last)
        if (s.launch > latest->launch) latest = &s;
      if (latest->graph >= ranks_[i].identity.size()) continue;
      last.push_back({i, latest->graph, ranks_[i].identity[latest->graph]});
    }
    if (last.size() < 2) return;
    emit_groups(groups_by(last), "cudaGraphLaunch",
                [&](const Entry& theirs, const std::string& their_ranks, size_t, const Entry& ours,
                    const std::string& our_ranks, size_t) {
                  return fmt::format(
                      "the job ended while replaying ({} of its traces have no end: killed, by "
                      "a timeout or NCCL's watchdog): {} last launched {} while {} last "
                      "launched {} (the last launches capguard recorded)",
                      last.size(), their_ranks, describe(ranks_[theirs.rank], theirs.graph),
                      our_ranks, describe(ranks_[ours.rank], ours.graph));
                });
  }

  std::vector<Rank> ranks_;
  std::vector<Finding>& out_;
  std::unordered_map<std::string, uint32_t> shapes_, identities_;
};

}  // namespace

bool judged_across_ranks(std::string_view rule) {
  return rule == kRankCollectiveMismatch.info().id;
}

void find_rank_collective_mismatches(Report& report) {
  // One job per world size; a rank claimed twice counts once (the merge names the doubt).
  std::map<uint32_t, std::map<uint32_t, const RankCollectives*>> jobs;
  for (const RankCollectives& c : report.collectives) {
    if (c.process == 0 || c.process > report.processes.size() || c.graphs.empty()) continue;
    const auto& who = report.processes[c.process - 1].who;
    if (!who || !who->rank) continue;
    jobs[who->world_size.value_or(0)].emplace(*who->rank, &c);
  }
  std::vector<Finding> found;
  for (const auto& [world, members] : jobs) {
    if (members.size() < 2) continue;
    std::vector<Rank> ranks;
    for (const auto& [rank, facts] : members) ranks.push_back({rank, facts, {}, {}, {}});
    std::vector<Finding> job_findings;
    Job(std::move(ranks), job_findings).judge();
    std::move(job_findings.begin(), job_findings.end(), std::back_inserter(found));
  }
  for (Finding& f : found) report.findings.push_back(std::move(f));
}

}  // namespace capguard::rules
