// Replays one process's calls through the capture model and the rules, and turns what the
// rules conclude into report findings (folding consequences under their root cause). The trace
// reader feeds it in analyze_trace(); tests feed it ApiEvents directly.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "model/api_catalog.h"
#include "model/capture_model.h"
#include "model/graph_coverage.h"
#include "model/graph_lifetime.h"
#include "model/rank_collectives.h"
#include "model/rehearsal.h"
#include "model/report.h"
#include "trace/event.h"
#include "trace/reader.h"
#include "util/flat_map.h"

namespace capguard {

namespace rules {
struct Rule;
struct Draft;
}  // namespace rules

class Replay {
 public:
  // Appends this process's findings and captures to `report`. ApiEvent::api strings must stay
  // valid for the replay's lifetime (the trace reader interns them).
  explicit Replay(Report& report, uint32_t pid = 0);

  void set_pid(uint32_t pid) { pid_ = pid; }
  // The 1-based index of this process in report.processes (findings and captures carry it).
  void set_process(uint32_t index) { process_ = index; }
  void define_stack(uint32_t id, std::span<const uint64_t> addresses);
  // Inline as far as a launch that only counts (CaptureModel::count_work): most calls made
  // during a capture end there; feed_rest() is the rest.
  [[gnu::always_inline]] inline void feed(const trace::ApiEvent& ev);
  // feed()'s test before it tries count_work(): true only where feed_rest() would reach
  // count_work() too, with nothing done before it: not an ErrorReport, nothing for the graph
  // lifetime (no graph op, a success, an Enqueue), not irrelevant (a capture is open, and
  // only_counts() wants a success without stream flags), no rehearsal to read the call.
  // tests/rule_table_test.cpp holds it to that.
  static bool may_count_first(const trace::ApiEvent& ev, const ApiInfo& api, GraphOp op,
                              const CaptureModel& model, bool rehearsing) {
    return api.kind == ApiKind::Enqueue && op == GraphOp::None && ev.result == 0 &&
           !model.open_captures().empty() && !rehearsing;
  }
  void thread_exit(uint32_t tid);
  // The trace's end record: the process exited (a trace without one was killed or is running).
  void process_end() { collectives_.on_end(); }
  // Graph records (format.h v3): what an exec's nodes hold, rejected updates.
  void graph_node(const trace::GraphNodeRecord& record);
  void graph(const trace::GraphRecord& record);
  void graph_update(const trace::GraphUpdateRecord& record);
  // Kernel records (format.h v9): graph coverage and a kernel node's arguments.
  void kernel_name(const trace::KernelNameRecord& record) { coverage_.on_kernel_name(record); }
  void launch_count(const trace::LaunchCountRecord& record) { coverage_.on_launch_count(record); }
  void kernel_args(const trace::KernelArgsRecord& record) { graphs_.on_kernel_args(record); }
  // Capture rehearsal: the mode to judge rehearsed regions against (before any
  // record), and the rehearsed ranges (format.h v6).
  void set_rehearse_mode(trace::CaptureMode mode) { rehearsal_ = RehearsalModel(mode); }
  void range_begin(const trace::RangeRecord& record);
  void range_end(const trace::RangeRecord& record);
  // The process ended (or its trace did): reports captures left open, writes report.captures.
  void finish();

  const CaptureModel& model() const { return model_; }
  const RehearsalModel& rehearsal() const { return rehearsal_; }
  // Stack ids used by reported locations that no stack record defined (a damaged trace).
  uint64_t undefined_stacks() const { return undefined_stacks_; }
  uint64_t unheld_framework_events() const { return graphs_.unheld_framework_events(); }
  uint64_t graph_nodes_not_kept() const { return graphs_.nodes_not_kept(); }
  uint64_t kernel_names_not_kept() const { return graphs_.kernel_names_not_kept(); }
  // Captures whose streams' clocks outgrew the model's budget (Capture::clocks_dropped): the
  // first few ids, and how many in all.
  const std::vector<uint32_t>& partial_captures() const { return partial_captures_; }
  uint64_t partial_capture_count() const { return partial_capture_count_; }
  // Rehearsed ranges past the rehearsal's bounds (model/rehearsal.h), not judged.
  uint64_t dropped_rehearsals() const { return rehearsal_.dropped_ranges(); }

 private:
  const ApiInfo& classify(std::string_view api);
  size_t emit(const rules::Rule& rule, rules::Draft& draft, const trace::ApiEvent* ev,
              const ApiInfo* api, const Site& where);
  void report_open(Capture& capture, bool thread_exited);
  Location location(const Site& site) const;
  // Each thread's latest call with a stack (a few threads, most recent kept): a finding on a
  // thread other than the main one is given the latest call of another thread before it, where
  // its work most likely started ("started-by"; kept only for a finding without a user frame
  // whose guess has one: name_framework_calls).
  [[gnu::always_inline]] inline void note_thread_call(const trace::ApiEvent& ev);
  [[gnu::noinline]] void note_other_thread_call(const trace::ApiEvent& ev);  // not the last one's
  const Site* started_by(const Site& where) const;
  void emit_graph_facts();
  // Capture rehearsal: judges the prepared call_; reports a judgement (ev null: none).
  void rehearse(const trace::ApiEvent& ev);
  // Asks the rules whether a rehearsed call would break a capture; a finding if so.
  void rehearsal_judge(const RehearsalFacts& facts, const trace::ApiEvent* ev, const ApiInfo* api);
  void add_rehearsals();  // the verdicts, at finish
  // Appends this process's rows of the lifecycle table (GraphSiteInfo) to the report.
  void add_lifecycle_table();
  CaptureLane lane(const Member& member, bool origin) const;
  // Moves ended captures out of the model into report.captures (see CaptureInfo::count).
  void retire(std::vector<std::unique_ptr<Capture>> captures);
  CaptureInfo capture_info(const Capture& c) const;
  // Where a site's stack lives in stack_pool_: two sites with the same key share a stack.
  uint64_t stack_key(const Site& site) const;
  // The first stack id defined with the same content as `id` (graph lifecycle sites).
  uint32_t canonical_stack(uint32_t id) const;

  struct CleanGroupKey {
    uint32_t thread;
    uint64_t stream;
    trace::CaptureMode mode;
    uint64_t begin, end;
    bool operator==(const CleanGroupKey&) const = default;
  };
  struct CleanGroupKeyHash {
    size_t operator()(const CleanGroupKey& k) const {
      return static_cast<size_t>(mix_hash(k.stream ^ mix_hash(k.begin ^ mix_hash(k.end)) ^
                                          (uint64_t{k.thread} << 32 | uint64_t(k.mode))));
    }
  };

  struct StackSpan {
    uint32_t offset = 0, size = 0;
  };
  struct ApiCacheEntry {
    std::string_view name;
    ApiInfo info;
    GraphOp graph_op = GraphOp::None;
    std::span<const rules::Rule* const> succeeded_rules;  // call_rules for a call that succeeded
  };
  // Inline, as far as a name seen before: feed() asks for every call's.
  [[gnu::always_inline]] inline const ApiCacheEntry& classify_entry(std::string_view api);
  [[gnu::noinline]] const ApiCacheEntry& classify_new(std::string_view api);
  [[gnu::noinline]] void feed_rest(const trace::ApiEvent& ev, const ApiCacheEntry& entry);

  Report& report_;
  uint32_t pid_;
  uint32_t process_ = 0;
  CaptureModel model_;
  GraphLifetime graphs_;
  GraphCoverage coverage_;
  RankCollectiveModel collectives_;
  Call call_;
  std::vector<uint64_t> stack_pool_;  // addresses of every distinct stack, back to back
  static constexpr size_t kThreadsRemembered = 64;
  std::vector<Site> thread_calls_;  // note_thread_call: one per thread, at most kThreadsRemembered
  size_t last_thread_call_ = 0;     // the entry the previous event updated
  FlatMap<uint64_t, StackSpan, U64Hash> stacks_;
  FlatMap<uint64_t, uint32_t, U64Hash> stack_by_content_;  // content hash -> first stack id
  FlatMap<uint64_t, uint32_t, U64Hash> canonical_stacks_;  // stack id -> first of its content
  // Keyed by the name's address: one multiply spreads an address well enough, where the full
  // U64Hash sits on every call's path. (Addresses of interned names: no trace chooses them.)
  struct AddressHash {
    size_t operator()(uint64_t address) const {
      return static_cast<size_t>((address * 0x9e3779b97f4a7c15ull) >> 32);
    }
  };
  FlatMap<uint64_t, ApiCacheEntry, AddressHash> api_cache_;
  std::vector<uint32_t> reported_open_;                // capture ids already reported
  FlatMap<uint64_t, bool, U64Hash> finding_captures_;  // capture ids findings name
  size_t first_capture_index_;                         // this process's part of report.captures
  FlatMap<CleanGroupKey, size_t, CleanGroupKeyHash> clean_groups_;  // -> index in report.captures
  std::optional<size_t> other_sites_group_;  // past kCleanSitesInDetail: one entry for the rest
  std::vector<std::pair<size_t, size_t>> lifecycle_findings_;  // (lifecycle site, finding)
  // Capture rehearsal: one finding per region, rule, call site and thread role (key), however
  // many executions repeat it.
  struct RehearsedBreak {
    size_t finding = 0;
    uint32_t region = 0;
    uint32_t executions = 0;
    const rules::Rule* rule = nullptr;
    std::string_view category;  // the verdict list's word (rules::rehearsal_category)
    Site site;
    bool other_thread = false;
  };
  RehearsalModel rehearsal_;
  std::vector<RehearsalFacts> rehearsed_calls_;  // reused
  FlatMap<uint64_t, RehearsedBreak, U64Hash> rehearsed_;
  std::optional<size_t> orphan_root_;  // capture-invalidated for a 901 nobody explains
  bool finished_ = false;
  bool emitting_graph_ = false;  // emit() for a graph fact: call_ is not that call's
  mutable uint64_t undefined_stacks_ = 0;
  std::vector<uint32_t> partial_captures_;
  uint64_t partial_capture_count_ = 0;  // counted where a location is built
};

// Inline below: the trace reader's loop calls feed() for every event (engine/analyzer.cpp).

inline const Replay::ApiCacheEntry& Replay::classify_entry(std::string_view api) {
  // Names are interned by the reader (and must outlive the replay), so the address and the
  // length identify the name.
  ApiCacheEntry* entry = api_cache_.find(reinterpret_cast<uintptr_t>(api.data()));
  if (entry && entry->name.size() == api.size()) [[likely]]
    return *entry;
  return classify_new(api);
}

inline void Replay::note_thread_call(const trace::ApiEvent& ev) {
  if (ev.stack == 0) return;
  if (last_thread_call_ < thread_calls_.size() && thread_calls_[last_thread_call_].tid == ev.tid)
      [[likely]] {
    thread_calls_[last_thread_call_] = Site::of(ev);
    return;
  }
  note_other_thread_call(ev);
}

inline void Replay::feed(const trace::ApiEvent& ev) {
  note_thread_call(ev);
  const ApiCacheEntry& entry = classify_entry(ev.api);
  if (may_count_first(ev, entry.info, entry.graph_op, model_, rehearsal_.active()) &&
      model_.count_work(ev, entry.info)) {
    if (model_.retirement_due()) retire(model_.retire_ended());
    return;
  }
  feed_rest(ev, entry);
}

}  // namespace capguard
