// Which graph launches and syncs outside captures are worth a callback. Mechanical filtering
// only (the analyzer judges): a small fixed table of live execs with the bases of the
// allocations their nodes reference. A launch is recorded while its exec is new (its first
// kFirstLaunches launches, so the analyzer can count uses and knows each first launch) or
// watched (a free hit one of its allocations). A steady replay loop of a correct program then
// pays nothing once its execs are past their first launches: the launch callbacks go off.
// After each instantiate, the first launch of another exec is recorded too (graph lifecycles).
// Syncs are called back once any exec exists and recorded when they fail (a replay's sticky
// error surfaces there) or when they follow a recorded launch (the analyzer then knows the
// launch finished).
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "trace/graph_record.h"

namespace capguard::interposer {

class GraphWatch {
 public:
  static constexpr size_t kSlots = 1024;
  static constexpr size_t kExactBases = 8;

  // A successful instantiate (or update): (re)starts the exec's entry. Bases are added with
  // add_base while its graph is walked.
  void on_instantiate(uint64_t exec);
  void add_base(uint64_t exec, uint64_t base);
  void on_destroy(uint64_t exec);
  // The top-level nodes of the exec's graph as the walk met them: (handle, walk index) pairs,
  // malloc'd; the watch owns (and frees) them from now on. A cudaGraphExec*NodeSetParams call
  // names its node by the graph's handle; node_index turns that into the walk's index.
  void set_nodes(uint64_t exec, uint64_t* pairs, uint32_t count);
  bool node_index(uint64_t exec, uint64_t node, uint32_t& index);
  // A free of [base, base + size) (size 0: only `base` itself): watches the execs it hits.
  void on_free(uint64_t base, uint64_t size);
  // A free the held memory found this exec holds (a framework's): watches it. True when it
  // was not watched before.
  bool watch(uint64_t exec);
  // A graph launch outside captures: whether to record it (counts the exec's launch).
  bool on_launch(uint64_t exec);
  // A sync outside captures with this result: whether to record it.
  bool on_sync(int32_t result);

  // Whether the launch / sync callbacks are wanted outside captures now.
  bool launches_wanted() const {
    return interest_.load(std::memory_order_acquire) > 0 ||
           other_budget_.load(std::memory_order_relaxed) > 0;
  }
  bool syncs_wanted() const { return any_exec_.load(std::memory_order_relaxed); }
  bool anything() const { return any_exec_.load(std::memory_order_relaxed); }
  // Recorded launches not yet followed by a sync: the next sync is recorded.
  bool launches_pending() const { return launches_pending_.load(std::memory_order_relaxed) != 0; }
  // Execs instantiated and not destroyed (those past the table's size not counted).
  bool any_live() const { return live_.load(std::memory_order_relaxed) > 0; }

 private:
  struct Slot {
    std::atomic<uint64_t> exec{0};  // 0 free, ~0 tombstone
    std::atomic<uint32_t> launches{0};
    std::atomic<bool> watched{false};
    std::atomic<bool> interesting{false};  // counted in interest_
    uint64_t bases[kExactBases] = {};
    uint32_t base_count = 0;
    uint64_t bloom = 0;         // bases beyond the exact ones
    uint64_t* nodes = nullptr;  // set_nodes' pairs
    uint32_t node_count = 0;
  };
  static void drop_nodes(Slot& slot);
  Slot* find(uint64_t exec);  // lock-free probe
  void set_interesting(Slot& slot, bool interesting);

  Slot slots_[kSlots];
  std::atomic<int> interest_{0};
  std::atomic<bool> any_exec_{false};
  std::atomic<int> live_{0};
  std::atomic<bool> overflow_{false};          // the table was full: unknown execs exist
  std::atomic<bool> overflow_watched_{false};  // ... and a free happened since
  std::atomic<uint32_t> launches_pending_{0};  // recorded launches not yet followed by a sync
  // After an instantiate while other execs live: the first launch of another exec is recorded
  // too (even one past its first launches), so the analyzer knows whether the program replayed
  // between two captures (graph-specialization-growth). Given up after kOtherLaunchBudget
  // launches of the newest exec alone, so a loop replaying only it pays no callback for long.
  static constexpr int kOtherLaunchBudget = 64;
  std::atomic<uint64_t> newest_{0};
  std::atomic<int> other_budget_{0};
  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
};

}  // namespace capguard::interposer
