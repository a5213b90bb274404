// Graph lifecycles: per capture site, which graphs its captures made, whether a
// re-capture replaced an exec that was hardly used (churn) or added a specialization while the
// program was already replaying (growth), and the lifecycle table. Fed by GraphLifetime, which
// owns the execs; judged here the way framework engineers judge it:
//
// - A graph's key is what it does: node types, kernels, edges (the walk's topology hash) and each
//   node's launch geometry and copy sizes. Addresses and scalar arguments are not in the key;
//   two captures of one key that differ only there are the same graph, bound to other data.
// - Churn: a key captured again right after its previous exec (no other key of the site captured
//   in between) when that exec was launched at most kChurnMaxLaunches times and then dropped
//   alone: destroyed before the new capture, or after it without being launched again. Execs
//   destroyed together with others (a teardown, a list of graphs dropped at once), kept alive,
//   or refreshed in place are no churn.
// - Growth: a new key captured after the program replayed (another exec, or the site's last
//   capture twice) while another exec of the site is still alive: live specializations piling up
//   between replays rather than in a start-up burst; `late_resized` counts those of a topology
//   captured before (sizes: rules/graph_specialization_growth.cpp). A sweep that destroys each
//   size's exec before capturing the next (a benchmark over message sizes) keeps one
//   alive at a time and grows nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/capture_model.h"
#include "util/flat_map.h"

namespace capguard {

struct ExecState;

// What differed between consecutive captures of one key, over all churn steps.
struct CaptureDiff {
  uint32_t identical = 0;  // steps whose graphs were the same, addresses and scalars too
  uint32_t addresses = 0;  // steps that differed only in the addresses of arguments or copies
  uint32_t scalars = 0;    // steps in which a scalar kernel argument differed
  uint32_t unknown = 0;    // steps whose earlier graph was not kept to compare (memory bound)
  struct Argument {
    std::string kernel;  // empty for a copy or memset
    char role = 'a';     // 'a' kernel argument, 's' copy source, 'd' destination
    uint32_t index = 0;
  };
  std::vector<Argument> moved;  // the first arguments whose address differed (at most 3)
  std::string scalar_kernel;    // a kernel whose scalar arguments differed
};

struct ChurnFacts {
  uint64_t captures = 0;       // of this key at this site
  uint32_t steps = 0;          // re-captures that replaced a hardly used exec
  uint64_t step_launches = 0;  // launches of the replaced execs, summed
  uint64_t launches = 0;       // launches of all the key's execs
  uint64_t cost_ns = 0;        // capture begin to instantiate, summed over the key's graphs
  uint32_t nodes = 0;
  CaptureDiff diff;
  std::shared_ptr<const Capture> last_capture;  // the last churned capture
  Site last_instantiate;
};

struct GrowthFacts {
  uint32_t keys = 0;           // distinct keys at the site (counted up to a bound)
  bool keys_at_least = false;  // more came than were counted
  uint32_t topologies = 0;     // distinct topologies among them
  uint32_t late_keys = 0;      // keys first captured between replays
  uint32_t late_resized = 0;   // of them, keys of a topology the site had captured before
  // Launches each late key's execs got, in capture order (at most kGrowthListed), and whether
  // each is a floor (an exec replayed past its recorded launches).
  std::vector<std::pair<uint64_t, bool>> late_launches;
  uint64_t late_cost_ns = 0;  // capture + instantiate of the late keys' first graphs
  std::shared_ptr<const Capture> last_capture;  // the last late key's capture
  Site last_instantiate;
};

// A row of the lifecycle table, before the replay turns its site into a location.
struct SiteSummary {
  Site site;
  bool captured = true;
  uint64_t graphs = 0;
  uint32_t keys = 0;
  uint32_t topologies = 0;
  uint64_t updates = 0;
  uint64_t alive = 0;
  uint64_t launches = 0;
  bool launches_at_least = false;
  uint64_t capture_ns = 0;
  uint64_t pool_bytes = 0;
};

class GraphLifecycle {
 public:
  static constexpr uint32_t kChurnMaxLaunches = 2;  // "replays per capture near 1"
  static constexpr size_t kGrowthListed = 12;
  static constexpr size_t kMaxSites = 4096;
  static constexpr size_t kMaxKeys = 16384;                  // per process, all sites together
  static constexpr size_t kMaxKeysPerSite = 4096;            // so one site cannot starve the others
  static constexpr size_t kMaxSignatureRefs = 4096;          // per key
  static constexpr size_t kMaxSignatureEntries = 4'000'000;  // all keys: ~64 MB

  // Maps a stack id to the id that stands for all stacks of its content (the replay knows
  // stacks; without it, ids are compared as they are).
  using SiteKey = uint32_t (*)(const void* context, uint32_t stack);
  void set_site_key(SiteKey key, const void* context) {
    site_key_ = key;
    site_key_context_ = context;
  }
  uint32_t stack_key(uint32_t stack) const {
    return site_key_ != nullptr ? site_key_(site_key_context_, stack) : stack;
  }

  // An exec instantiated (its graph's capture known or not).
  void on_instantiate(ExecState& exec);
  // The walk of an exec's graph ended ('G' record): its key is known now.
  void on_walked(ExecState& exec, uint64_t topology_hash, bool complete);
  // A graph launch of this exec outside captures (after its launch count went up).
  void on_launch(ExecState& exec);
  void on_destroy(ExecState& exec);
  // cudaGraphExecUpdate or a node SetParams succeeded on this exec.
  void on_updated(ExecState& exec);
  // The process ended: execs still in `live` are alive at exit.
  void finish(const std::vector<const ExecState*>& live);

  // Facts, not findings: every key with a churn step, every site with a late key. How many make
  // a finding is the rules' to say (graph-rebuilt-every-step, graph-specialization-growth).
  std::vector<ChurnFacts>& churn() { return churn_; }
  std::vector<std::pair<size_t, GrowthFacts>>& growth() { return growth_; }  // (site, facts)
  // Which site each churn fact is at (parallel to churn()).
  const std::vector<size_t>& churn_sites() const { return churn_sites_; }
  const std::vector<SiteSummary>& sites() const { return summaries_; }

 private:
  struct Signature {  // the last exec of a key, for the next capture's diff
    bool kept = false;
    std::vector<std::pair<uint32_t, uint64_t>> scalars;  // (node, hash) of nodes that have them
    std::vector<uint64_t> refs;                          // packed (node, role, index) keys ...
    std::vector<uint64_t> addresses;                     // ... and their addresses
  };
  struct KeyState {
    uint64_t shape = 0;
    uint64_t topology = 0;
    uint64_t captures = 0;
    uint64_t launches = 0;
    bool launches_at_least = false;
    uint64_t cost_ns = 0;
    uint32_t last_serial = 0;        // the key's newest exec
    ExecState* last_exec = nullptr;  // ... while it lives (null once destroyed)
    size_t site = 0;
    bool last_destroy_lone = false;  // its destroy batch held it alone
    uint64_t last_launches = 0;
    uint64_t last_capture_index = 0;  // the site's capture count when it was captured
    Signature signature;
    ChurnFacts churn;
  };
  struct SiteState {
    uint32_t stack = 0;
    SiteSummary summary;
    std::vector<size_t> keys;  // indexes into keys_
    std::vector<uint64_t> topologies;
    uint64_t capture_index = 0;  // walked captures so far
    uint64_t live = 0;           // its execs instantiated and not yet destroyed
    uint32_t last_walked_serial = 0;
    uint64_t walked_at = 0;        // clock_ at its last walk
    uint32_t newest_launches = 0;  // launches of that walk's exec since
    // The destroy batch in progress: execs of this site destroyed with no other event of the
    // site in between, and the churn steps waiting on whether it holds one exec alone.
    uint32_t batch_size = 0;
    std::vector<size_t> batch_keys;
    std::vector<std::pair<size_t, ChurnFacts>> batch_steps;  // (key, the step's facts)
    GrowthFacts growth;
    std::vector<size_t> late;  // keys first captured between replays (the first kGrowthListed)
  };

  SiteState* site_of(const ExecState& exec);
  // Whether the program replayed since the site's last capture: launched that capture's exec
  // twice (once is a check right after capturing), or any other exec, at any site (the
  // interposer records the first launch of another exec after each instantiate for this).
  bool replayed_since(const SiteState& site) const;
  void close_batch(SiteState& site);
  void commit_step(KeyState& key, const ChurnFacts& step);
  void diff(const Signature& before, const ExecState& after, CaptureDiff& out) const;
  void remember(KeyState& key, const ExecState& exec);

  struct LaunchMark {
    uint64_t at = 0;
    uint32_t serial = 0;
  };
  SiteKey site_key_ = nullptr;
  const void* site_key_context_ = nullptr;
  uint64_t clock_ = 0;  // counts walks and launches
  size_t signature_entries_ = 0;
  LaunchMark last_launch_;        // the latest launch
  LaunchMark last_other_launch_;  // the latest of an exec other than last_launch_'s
  std::vector<SiteState> sites_;
  FlatMap<uint64_t, size_t, U64Hash> site_index_;  // (stack, captured) -> index into sites_
  FlatMap<uint64_t, size_t, U64Hash> key_index_;   // (site, shape) -> index into keys_
  std::vector<KeyState> keys_;
  std::vector<ChurnFacts> churn_;
  std::vector<size_t> churn_sites_;
  std::vector<std::pair<size_t, GrowthFacts>> growth_;
  std::vector<SiteSummary> summaries_;
};

}  // namespace capguard
