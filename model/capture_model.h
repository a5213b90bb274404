// The capture model: what the replayed program's streams, events, threads and captures are
// doing, rebuilt from the trace one call at a time. CUDA's result codes are the truth; the
// model supplies the context that a result alone cannot (which capture a call hit, where a
// stream forked, which forked stream was never joined back).
//
// Each call goes through prepare() (resolve the stream, look up the captures involved, work out
// which captures the result killed), then the rules read the prepared Call, then apply()
// updates the state.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "model/api_catalog.h"
#include "model/report.h"
#include "trace/cuda_results.h"
#include "trace/event.h"
#include "util/flat_map.h"

namespace capguard {

// A stream as CUDA sees it: the per-thread default stream is one stream per thread.
struct StreamKey {
  uint64_t handle = 0;
  uint32_t tid = 0;  // only for the per-thread stream (handle kStreamPerThread)
  bool operator==(const StreamKey&) const = default;
  bool is_legacy() const { return handle == trace::kStreamLegacy; }
};
struct StreamKeyHash {
  size_t operator()(const StreamKey& k) const {
    return static_cast<size_t>(mix_hash(k.handle ^ (static_cast<uint64_t>(k.tid) << 40)));
  }
};

// Where something happened, enough to rebuild a report Location.
struct Site {
  bool known = false;
  uint64_t seq = 0;
  uint32_t stack = 0;
  uint32_t tid = 0;
  std::string_view api;
  static Site of(const trace::ApiEvent& ev) { return {true, ev.seq, ev.stack, ev.tid, ev.api}; }
  // What `*this = of(ev)` does, as scalar stores (see CaptureModel::add_work).
  void set(const trace::ApiEvent& ev) {
    known = true;
    seq = ev.seq;
    stack = ev.stack;
    tid = ev.tid;
    api = ev.api;
  }
};

// A stream taking part in a capture. Vector clocks track joins: clock[i] is how much of member
// i's work this stream has waited for (clock[self] is its own work count).
struct Member {
  // Not "= default": vector::emplace_back() value-initializes, which would zero all of a
  // Member before running the initializers below (GCC: rep stos, slow to start).
  Member() {}
  StreamKey stream;
  uint32_t work = 0;
  std::vector<uint32_t> clock;
  uint64_t fork_event = 0;
  Site fork_record;  // where the event this stream waited on was recorded
  Site fork_wait;    // the cudaStreamWaitEvent that brought it in
  Site last_work;
  bool present = true;       // false once the stream was destroyed
  uint32_t forked_from = 0;  // the member whose recorded event this stream waited on to join
  uint32_t joined_into = 0;  // the member that last waited on an event recorded here
  Site join_wait;            // that wait: a join edge in the picture of the capture
  // The stream's last event record, when it failed: a join that never happened (an event of
  // another device gives 400). Cleared by a record that succeeds.
  Site failed_record;
  int32_t failed_record_result = 0;
  trace::ApiDomain failed_record_domain = trace::ApiDomain::Runtime;
  bool joined = true;  // set when the capture ends: the origin waited for all its work
};

// What a capture is, without its streams: cheap to copy (graph_lifetime keeps one per graph).
struct CaptureHead {
  uint32_t id = 0;       // the report's capture id (1-based)
  uint64_t cuda_id = 0;  // CUDA's capture id when recorded; 0 unknown
  StreamKey origin;
  trace::CaptureMode mode = trace::CaptureMode::Global;
  uint32_t tid = 0;
  Site begin;
  Site end;
  std::optional<bool> non_blocking;          // the origin stream's flags, when known
  CaptureState status = CaptureState::Open;  // Open while running and valid
  bool ended = false;                        // EndCapture (or termination) happened
  std::optional<size_t> root_cause;          // the finding that killed it
  std::optional<uint64_t> nodes;
  // The vector clocks of its streams outgrew the model's budget (kClockBudget): they were
  // dropped, and which forked streams the origin joined is no longer judged.
  bool clocks_dropped = false;
  // The model saw no end, and a later call showed that the capture was over (CUDA said its
  // stream no longer captured, or a call it refuses during a capture succeeded): what the
  // capture made after its last call the model saw (last_known) is unknown.
  bool state_unknown = false;
  Site last_known;  // its last call the model saw: begin, work, records and waits on its streams
  bool valid() const { return !ended && status == CaptureState::Open; }
  bool open() const { return !ended; }
};

struct Capture : CaptureHead {
  std::vector<Member> members;  // [0] is the origin; emptied when the capture ends
  std::vector<Member> lanes;    // the members as the capture ended (no clocks), for reports
  bool referenced = false;      // scratch for retire_ended()
  uint64_t clock_charge = 0;    // clock entries of its members and events while it is open
};

// The most vector clock entries (members' and recorded events' clocks of open captures) the
// model holds at once: 16M entries, 64 MiB. Clocks are quadratic in the streams forked into a
// capture (each holds one entry per member); past the budget the largest open capture's clocks
// are dropped (Capture::clocks_dropped) and the report says it was not analyzed in full.
inline constexpr uint64_t kClockBudget = uint64_t{1} << 24;

struct EventState {
  Capture* capture = nullptr;  // capture the last record happened in; null when eager
  uint32_t member = 0;
  std::vector<uint32_t> clock;
  Site record;
};

struct ThreadState {
  trace::CaptureMode mode = trace::CaptureMode::Global;  // cudaThreadExchangeStreamCaptureMode
  bool mode_exchanged = false;
  std::vector<Capture*> captures;  // open captures this thread began, oldest first
};

struct StreamState {
  Capture* capture = nullptr;  // open capture the stream belongs to
  uint32_t member = 0;
  std::optional<bool> non_blocking;
  Capture* terminated = nullptr;  // its capture was ended from another thread (908)
};

// One call, as the model understands it before applying it.
struct Call {
  const trace::ApiEvent* ev = nullptr;
  ApiInfo api;
  bool has_stream = false;
  StreamKey stream;
  std::optional<bool> stream_non_blocking;
  Capture* stream_capture = nullptr;  // open capture the stream is in
  uint32_t stream_member = 0;         // its index in stream_capture->members
  Capture* event_capture = nullptr;   // capture that recorded the event (may have ended)
  const EventState* event = nullptr;
  const ThreadState* thread = nullptr;
  Capture* own_capture = nullptr;     // the calling thread's newest open capture
  std::span<Capture* const> victims;  // captures this call's result killed
  Capture* consequence_of = nullptr;  // failed only because this capture was already dead
  // A capture the model believed open that this call shows was over already, with no end the
  // model saw: the call is judged without it, and apply() ends it (state_unknown).
  Capture* found_over = nullptr;

  const trace::ApiEvent& event_record() const { return *ev; }
  int result() const { return ev->result; }
  bool stream_is_legacy() const { return has_stream && stream.is_legacy(); }
};

// CUDA's capture result codes (trace/cuda_results.h, shared with the interposer).
using trace::kErrCapturedEvent;
using trace::kErrCaptureImplicit;
using trace::kErrCaptureInvalidated;
using trace::kErrCaptureIsolation;
using trace::kErrCaptureMerge;
using trace::kErrCaptureUnjoined;
using trace::kErrCaptureUnmatched;
using trace::kErrCaptureUnsupported;
using trace::kErrCaptureWrongThread;
using trace::kErrIllegalState;
using trace::kErrInvalidResourceHandle;

// The kinds whose successful calls change the model while no capture is open. The interposer
// must record each of them outside captures too (trace/api_kinds.def `outside`), or real
// traces would lack what the model reads: tests/api_table_agreement_test.cpp holds them to it.
bool reads_when_idle(ApiKind kind);

class CaptureModel {
 public:
  explicit CaptureModel(uint32_t first_capture_id = 1, uint64_t clock_budget = kClockBudget)
      : first_id_(first_capture_id), clock_budget_(clock_budget) {}

  // True when nothing about this call can matter: no capture open, success, and a kind that
  // changes no state. The replay's fast path.
  bool irrelevant(const trace::ApiEvent& ev, const ApiInfo& api) const;
  void prepare(const trace::ApiEvent& ev, const ApiInfo& api, Call& call);
  // The body of a capture: a launch that succeeded on a stream (not the legacy one) of a valid
  // capture changes nothing but the work counts, and no rule accepts it
  // (tests/rule_table_test.cpp). only_counts() says whether `ev` is one (its stream's state,
  // else null); count_work() applies it when it is, as prepare() and apply() would, and says so.
  const StreamState* only_counts(const trace::ApiEvent& ev, const ApiInfo& api) const;
  bool count_work(const trace::ApiEvent& ev, const ApiInfo& api);
  // Updates the state; `finding` is the finding the rules made for this call, if any. (By
  // reference: built by value, its flag byte was stored and reloaded in a wider load, which
  // stalls store forwarding on every call.)
  void apply(const Call& call, const std::optional<size_t>& finding);
  // A thread ended: returns its captures still open (the caller reports them).
  std::vector<Capture*> thread_exit(uint32_t tid);

  // Captures whose rules prohibit a potentially unsafe call from thread `tid` now (CUDA's
  // cudaStreamCaptureMode semantics), whether or not they are still valid.
  std::vector<Capture*> prohibiting(uint32_t tid) const;
  // A valid Global capture begun by a thread other than `tid` is open.
  bool other_thread_has_global_capture(uint32_t tid) const;
  // Forked members of `capture` whose last work its origin never waited for.
  std::vector<const Member*> unjoined_members(const Capture& capture) const;
  // The members of `capture` for a report: kept from when it ended, or as they are now while
  // it is still open; `joined` filled in, clocks dropped.
  static std::vector<Member> lanes_of(const Capture& capture);

  std::span<Capture* const> open_captures() const { return open_; }
  // The captures still held, oldest first: open ones, and ended ones not yet retired.
  const std::vector<std::unique_ptr<Capture>>& captures() const { return captures_; }
  // Hands over, oldest first, the ended captures that nothing in the model refers to any more
  // (no stream, event or thread): nothing can change them again. Memory then stays bounded by
  // live state, however many captures a long run makes. `all`: every capture, at the end.
  std::vector<std::unique_ptr<Capture>> retire_ended(bool all = false);
  // Enough captures ended since the last retire_ended() that another is worth its cost.
  bool retirement_due() const {
    return captures_.size() >= 2 * retained_ + events_.size() + streams_.size() + 1024;
  }
  Capture* capture_by_cuda_id(uint64_t cuda_id);
  // Graph lifetime: the open capture the call's stream belongs to, if any (a
  // cudaMallocAsync there makes a memory node, not an allocation).
  const Capture* stream_capture(const trace::ApiEvent& ev, const ApiInfo& api) const;

 private:
  StreamKey resolve(const trace::ApiEvent& ev, const ApiInfo& api, bool& has_stream) const;
  // threads_[tid], the last one remembered: nearly every call comes from the thread before.
  ThreadState& thread_state(uint32_t tid) {
    if (last_thread_ != nullptr && last_tid_ == tid) [[likely]]
      return *last_thread_;
    return other_thread_state(tid);
  }
  ThreadState& other_thread_state(uint32_t tid);
  Capture* attribute_dead_capture(const Call& call);
  // Whether the call shows that `capture`, believed open, was over (Call::found_over).
  static bool shows_over(const Call& call, const Capture& capture);
  static void found_over(Call& call, Capture& capture);
  void end_unseen(Capture& capture, const trace::ApiEvent& ev);
  void compute_victims(Call& call);
  void begin_capture(const Call& call);
  void end_capture(Capture& capture, const trace::ApiEvent& ev);
  void join(Capture& capture, StreamKey stream, const EventState* from, const trace::ApiEvent& ev);
  void record_event(const Call& call);
  void note_record_result(const Call& call);
  void wait_event(const Call& call);
  void add_work(const Call& call);
  void add_work(Capture* c, uint32_t member, const trace::ApiEvent& ev);
  void grow_clock(Capture& c, uint32_t member);  // add_work(), the first time on a member
  // Accounts for `n` more (or, release, fewer) clock entries of open capture `c`; past the
  // budget, drops the clocks of the open capture that holds the most.
  void charge(Capture& c, uint64_t n);
  void release(Capture& c, uint64_t n);
  void drop_clocks(Capture& c);

  uint32_t first_id_;
  uint64_t clock_budget_;
  uint64_t clock_entries_ = 0;  // charged to open captures
  uint32_t next_id_ = 0;        // captures begun so far
  std::vector<std::unique_ptr<Capture>> captures_;
  size_t retained_ = 0;  // captures_.size() after the last retire_ended()
  std::vector<Capture*> open_;
  std::vector<Capture*> victims_;  // reused storage behind Call::victims
  FlatMap<StreamKey, StreamState, StreamKeyHash> streams_;
  FlatMap<uint64_t, EventState, U64Hash> events_;
  FlatMap<uint64_t, ThreadState, U64Hash> threads_;  // inserted into by thread_state() only
  ThreadState* last_thread_ = nullptr;               // reset when threads_ erases (entries move)
  uint32_t last_tid_ = 0;
};

// Inline below: the replay calls count_work() for nearly every call made during a capture,
// from the trace reader's loop (Replay::feed). always_inline: in a loop that large, GCC
// otherwise leaves one of them as a call.

[[gnu::always_inline]] inline void CaptureModel::add_work(Capture* c, uint32_t member,
                                                          const trace::ApiEvent& ev) {
  if (!c || !c->valid() || member >= c->members.size()) return;
  Member& m = c->members[member];
  ++m.work;
  // Field by field: a whole Site assigned here is copied with `rep movs` by GCC, which is slow
  // to start and stalled on the stores just made (a tenth of the replay's time per launch).
  m.last_work.set(ev);
  c->last_known.set(ev);
  if (c->clocks_dropped) return;
  if (member < m.clock.size()) [[likely]] {  // nearly always: the clock grows once
    m.clock[member] = m.work;
    return;
  }
  grow_clock(*c, member);
}

[[gnu::always_inline]] inline const StreamState* CaptureModel::only_counts(
    const trace::ApiEvent& ev, const ApiInfo& api) const {
  using trace::Field;
  // A status other than active (invalidated, or none: the capture was over) is the
  // general path's to judge.
  if (api.kind != ApiKind::Enqueue || ev.result != 0 || ev.has(Field::StreamFlags) ||
      (ev.has(Field::StatusAfter) && ev.status_after != trace::CaptureStatus::Active))
    return nullptr;
  // resolve() for an Enqueue (not a SyncCopy), without its out-parameter (kept in memory, it
  // cost a stack canary). Legacy: escaped-legacy-work's to judge.
  if (!ev.has(Field::Stream) || ev.stream == trace::kStreamLegacy ||
      (ev.stream == 0 && !api.per_thread))
    return nullptr;
  const StreamKey key = ev.stream == 0 || ev.stream == trace::kStreamPerThread
                            ? StreamKey{trace::kStreamPerThread, ev.tid}
                            : StreamKey{ev.stream, 0};
  const StreamState* ss = streams_.find(key);
  if (ss == nullptr || ss->capture == nullptr || !ss->capture->valid() ||
      ss->member >= ss->capture->members.size())
    return nullptr;
  // prepare() would learn CUDA's capture id here: the general path does that.
  const bool cuda_id_news =
      ss->capture->cuda_id == 0 && ev.has(Field::CaptureId) && ev.capture_id != 0;
  return cuda_id_news ? nullptr : ss;
}

[[gnu::always_inline]] inline bool CaptureModel::count_work(const trace::ApiEvent& ev,
                                                            const ApiInfo& api) {
  const StreamState* ss = only_counts(ev, api);
  if (ss == nullptr) return false;
  thread_state(ev.tid);  // as prepare() would: the thread is known from here on
  add_work(ss->capture, ss->member, ev);
  return true;
}

}  // namespace capguard
