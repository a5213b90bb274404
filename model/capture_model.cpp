#include "model/capture_model.h"

#include <algorithm>
#include <utility>

#include "trace/reset.h"

namespace capguard {

using trace::ApiEvent;
using trace::CaptureMode;
using trace::CaptureStatus;
using trace::Field;

namespace {

// Room reserved in a vector clock: one slot per member, and captures have few members (a
// smaller allocation would take as much memory).
constexpr size_t kClockReserve = 4;

void erase_value(std::vector<Capture*>& list, const Capture* c) {
  list.erase(std::remove(list.begin(), list.end(), c), list.end());
}

// Returns how many entries `into` grew by.
size_t merge_clock(std::vector<uint32_t>& into, const std::vector<uint32_t>& from) {
  const size_t before = into.size();
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
  return into.size() - before;
}

void free_clock(std::vector<uint32_t>& clock) {
  clock.clear();
  clock.shrink_to_fit();
}

// Turns a capture's members into lanes for a report: `joined` filled in, clocks dropped.
void make_lanes(std::vector<Member>& lanes, CaptureState status, bool clocks_dropped) {
  // Once a capture is invalidated the model stops following it: a join that came later is
  // unknown, so no lane of an invalidated capture is called unjoined. Nor of one whose clocks
  // were dropped.
  const bool judged = status != CaptureState::Invalidated && !clocks_dropped;
  const std::vector<uint32_t>& origin_clock = lanes[0].clock;
  for (size_t i = 1; i < lanes.size() && judged; ++i) {
    const uint32_t waited_for = i < origin_clock.size() ? origin_clock[i] : 0;
    lanes[i].joined = lanes[i].work <= waited_for;
  }
  for (Member& lane : lanes) free_clock(lane.clock);
}

}  // namespace

bool reads_when_idle(ApiKind kind) {
  switch (kind) {
    case ApiKind::BeginCapture:
    case ApiKind::EndCapture:
    case ApiKind::ExchangeMode:
    case ApiKind::StreamCreate:
    case ApiKind::StreamDestroy:
    case ApiKind::EventCreate:
    case ApiKind::EventDestroy:
      return true;
    default:
      return false;
  }
}

bool CaptureModel::irrelevant(const ApiEvent& ev, const ApiInfo& api) const {
  return open_.empty() && ev.result == 0 && !reads_when_idle(api.kind) &&
         !ev.has(Field::StreamFlags);
}

StreamKey CaptureModel::resolve(const ApiEvent& ev, const ApiInfo& api, bool& has_stream) const {
  has_stream = true;
  // Synchronous copies and memsets run on the NULL stream: legacy, or per-thread for _ptds.
  if (api.kind == ApiKind::SyncCopy)
    return api.per_thread ? StreamKey{trace::kStreamPerThread, ev.tid}
                          : StreamKey{trace::kStreamLegacy, 0};
  if (!ev.has(Field::Stream)) {
    has_stream = false;
    return {};
  }
  if (ev.stream == 0)
    return api.per_thread ? StreamKey{trace::kStreamPerThread, ev.tid}
                          : StreamKey{trace::kStreamLegacy, 0};
  if (ev.stream == trace::kStreamPerThread) return {trace::kStreamPerThread, ev.tid};
  return {ev.stream, 0};
}

const Capture* CaptureModel::stream_capture(const ApiEvent& ev, const ApiInfo& api) const {
  if (open_.empty()) return nullptr;
  bool has_stream = false;
  const StreamKey key = resolve(ev, api, has_stream);
  if (!has_stream) return nullptr;
  const StreamState* ss = streams_.find(key);
  return ss != nullptr ? ss->capture : nullptr;
}

ThreadState& CaptureModel::other_thread_state(uint32_t tid) {
  last_thread_ = &threads_[tid];
  last_tid_ = tid;
  return *last_thread_;
}

Capture* CaptureModel::capture_by_cuda_id(uint64_t cuda_id) {
  if (cuda_id == 0) return nullptr;
  for (Capture* c : open_)
    if (c->cuda_id == cuda_id) return c;
  return nullptr;
}

void CaptureModel::prepare(const ApiEvent& ev, const ApiInfo& api, Call& call) {
  trace::reset(call);
  call.ev = &ev;
  call.api = api;
  call.stream = resolve(ev, api, call.has_stream);

  ThreadState& thread = thread_state(ev.tid);
  call.thread = &thread;
  call.own_capture = thread.captures.empty() ? nullptr : thread.captures.back();

  if (call.has_stream) {
    if (const StreamState* ss = streams_.find(call.stream)) {
      call.stream_capture = ss->capture;
      call.stream_member = ss->member;
      call.stream_non_blocking = ss->non_blocking;
    }
    if (ev.has(Field::StreamFlags)) call.stream_non_blocking = (ev.stream_flags & 1) != 0;
    if (call.stream.handle == trace::kStreamPerThread && !call.stream_non_blocking)
      call.stream_non_blocking = false;  // the per-thread stream synchronizes with legacy
    // CUDA's own word on membership, when recorded, beats the model's guess.
    bool cuda_says_capturing =
        ev.has(Field::CaptureId) && ev.capture_id != 0 &&
        (!ev.has(Field::StatusBefore) || ev.status_before != CaptureStatus::None);
    if (cuda_says_capturing && api.kind != ApiKind::BeginCapture) {
      if (!call.stream_capture) {
        if (Capture* c = capture_by_cuda_id(ev.capture_id)) {
          join(*c, call.stream, nullptr, ev);
          call.stream_capture = c;
          call.stream_member = static_cast<uint32_t>(c->members.size() - 1);
        }
      } else if (call.stream_capture->cuda_id == 0) {
        call.stream_capture->cuda_id = ev.capture_id;
      }
    }
  }
  if (ev.has(Field::Event)) {
    if (const EventState* es = events_.find(ev.event)) {
      call.event = es;
      call.event_capture = es->capture;
    }
  }
  // A capture believed open that this call shows was over: the rules judge the call
  // without it, and apply() ends it, so that nothing later is held against it.
  if (call.stream_capture != nullptr && call.stream_capture->valid() &&
      (shows_over(call, *call.stream_capture) ||
       // A begin that succeeded proves the stream idle: the capture that held it is over.
       (api.kind == ApiKind::BeginCapture && ev.result == 0))) {
    found_over(call, *call.stream_capture);
  } else if (api.kind == ApiKind::EventSync && ev.result == 0 && call.event_capture != nullptr &&
             call.event_capture->valid()) {
    found_over(call, *call.event_capture);  // an event of a capture syncs once it is over
  }
  if (ev.result != 0) call.consequence_of = attribute_dead_capture(call);
  compute_victims(call);
}

bool CaptureModel::shows_over(const Call& call, const Capture& capture) {
  const ApiEvent& ev = *call.ev;
  switch (call.api.kind) {
    case ApiKind::BeginCapture:  // their own cases (prepare, apply)
    case ApiKind::EndCapture:
    case ApiKind::StreamDestroy:
      return false;
    case ApiKind::StreamSync:  // CUDA refuses to synchronize or query a capturing stream (900)
      if (ev.result == 0) return true;
      break;
    default:
      break;
  }
  // CUDA's own word on the stream, when recorded: not capturing, or in another capture.
  if (ev.has(Field::StatusBefore) && ev.status_before == CaptureStatus::None) return true;
  if (ev.has(Field::StatusAfter) && ev.status_after == CaptureStatus::None) return true;
  return ev.has(Field::CaptureId) && ev.capture_id != 0 && capture.cuda_id != 0 &&
         ev.capture_id != capture.cuda_id;
}

void CaptureModel::found_over(Call& call, Capture& capture) {
  call.found_over = &capture;
  if (call.stream_capture == &capture) {
    call.stream_capture = nullptr;
    call.stream_member = 0;
  }
  if (call.own_capture == &capture) {  // the thread's newest capture but this one
    call.own_capture = nullptr;
    for (auto it = call.thread->captures.rbegin(); it != call.thread->captures.rend(); ++it)
      if (*it != &capture) {
        call.own_capture = *it;
        break;
      }
  }
}

void CaptureModel::end_unseen(Capture& capture, const ApiEvent& ev) {
  capture.state_unknown = true;
  if (capture.status == CaptureState::Open) capture.status = CaptureState::Unknown;
  // Its end is the last call known to be in it: what came after is unknown.
  if (!capture.end.known)
    capture.end = capture.last_known.known ? capture.last_known : capture.begin;
  end_capture(capture, ev);
}

// A failure that a capture's earlier death explains: 901 on its streams or events, a failed
// query/sync of one of its events, the origin's EndCapture after another thread ended it.
Capture* CaptureModel::attribute_dead_capture(const Call& call) {
  const ApiEvent& ev = *call.ev;
  auto dead = [](Capture* c) { return c && c->status != CaptureState::Open && c->root_cause; };
  if (ev.result == kErrCaptureInvalidated) {
    Capture* target = call.stream_capture;
    if (!target && call.event_capture && call.event_capture->open()) target = call.event_capture;
    if (!target && ev.has(Field::CaptureId)) target = capture_by_cuda_id(ev.capture_id);
    if (!target) {
      for (auto it = call.thread->captures.rbegin(); it != call.thread->captures.rend(); ++it)
        if (dead(*it)) return *it;
    }
    return dead(target) ? target : nullptr;
  }
  if (call.api.kind == ApiKind::EventSync && dead(call.event_capture)) return call.event_capture;
  if (call.api.kind == ApiKind::EndCapture && ev.result == kErrIllegalState && call.has_stream) {
    const StreamState* ss = streams_.find(call.stream);
    if (ss && dead(ss->terminated)) return ss->terminated;
  }
  return nullptr;
}

void CaptureModel::compute_victims(Call& call) {
  victims_.clear();
  auto add = [&](Capture* c) {
    if (c && c->valid() && std::find(victims_.begin(), victims_.end(), c) == victims_.end())
      victims_.push_back(c);
  };
  const ApiEvent& ev = *call.ev;
  if (!call.consequence_of) {
    switch (ev.result) {
      case kErrCaptureUnsupported:
        if (call.api.kind == ApiKind::BeginCapture) break;  // no capture began
        add(call.stream_capture);
        if (victims_.empty())
          for (Capture* c : prohibiting(ev.tid)) add(c);
        if (victims_.empty()) add(call.own_capture);
        if (victims_.empty())
          for (Capture* c : open_)
            if (c->mode == CaptureMode::Global) add(c);
        break;
      case kErrCaptureMerge:
        add(call.stream_capture);
        add(call.event_capture);
        break;
      case kErrCaptureUnmatched:
      case kErrCaptureUnjoined:
      case kErrCaptureIsolation:
      case kErrCaptureWrongThread:
        add(call.stream_capture);
        break;
      case kErrCaptureImplicit:
        // The legacy stream synchronizes with every blocking stream: those captures die.
        for (Capture* c : open_)
          if (c->non_blocking != true) add(c);
        if (victims_.empty()) add(call.own_capture);
        break;
      case kErrCapturedEvent:
        add(call.event_capture);
        break;
      case kErrCaptureInvalidated:  // the model thought it alive: first sign of its death
        add(call.stream_capture);
        if (call.event_capture && call.event_capture->open()) add(call.event_capture);
        if (ev.has(Field::CaptureId)) add(capture_by_cuda_id(ev.capture_id));
        break;
      default:
        break;
    }
  }
  if (ev.has(Field::StatusAfter) && ev.status_after == CaptureStatus::Invalidated)
    add(call.stream_capture);
  call.victims = victims_;
}

std::vector<Capture*> CaptureModel::prohibiting(uint32_t tid) const {
  std::vector<Capture*> out;
  const ThreadState* thread = threads_.find(tid);
  CaptureMode mode = thread ? thread->mode : CaptureMode::Global;
  if (mode == CaptureMode::Relaxed) return out;
  for (Capture* c : open_) {
    bool own = c->tid == tid && c->mode != CaptureMode::Relaxed;
    bool others_global =
        c->tid != tid && mode == CaptureMode::Global && c->mode == CaptureMode::Global;
    if (own || others_global) out.push_back(c);
  }
  return out;
}

bool CaptureModel::other_thread_has_global_capture(uint32_t tid) const {
  for (const Capture* c : open_)
    if (c->tid != tid && c->mode == CaptureMode::Global && c->valid()) return true;
  return false;
}

std::vector<const Member*> CaptureModel::unjoined_members(const Capture& capture) const {
  std::vector<const Member*> out;
  if (capture.members.empty() || capture.clocks_dropped) return out;
  const std::vector<uint32_t>& origin_clock = capture.members[0].clock;
  for (size_t i = 1; i < capture.members.size(); ++i) {
    const Member& m = capture.members[i];
    uint32_t joined = i < origin_clock.size() ? origin_clock[i] : 0;
    if (m.present && m.work > joined) out.push_back(&m);
  }
  return out;
}

std::vector<Member> CaptureModel::lanes_of(const Capture& capture) {
  if (capture.members.empty()) return capture.lanes;
  std::vector<Member> lanes = capture.members;
  make_lanes(lanes, capture.status, capture.clocks_dropped);
  return lanes;
}

void CaptureModel::apply(const Call& call, const std::optional<size_t>& finding) {
  const ApiEvent& ev = *call.ev;
  for (Capture* v : call.victims) {
    v->status = ev.result == kErrCaptureUnjoined ? CaptureState::Failed : CaptureState::Invalidated;
    if (!v->root_cause) v->root_cause = finding;
  }
  if (call.has_stream && ev.has(Field::StreamFlags) && call.api.kind != ApiKind::StreamDestroy)
    streams_[call.stream].non_blocking = (ev.stream_flags & 1) != 0;
  if (call.found_over != nullptr && call.found_over->open()) end_unseen(*call.found_over, ev);

  switch (call.api.kind) {
    case ApiKind::BeginCapture:
      if (ev.result == 0 && call.has_stream) {
        // A successful begin proves the stream idle: a dead capture that held it (invalidated,
        // its EndCapture not seen) is over too (a valid one was found over in prepare()).
        if (Capture* held = call.stream_capture; held != nullptr && held->open()) {
          end_capture(*held, ev);
        }
        begin_capture(call);
      }
      break;
    case ApiKind::EndCapture: {
      Capture* c = call.stream_capture;
      if (ev.result == 0 || ev.result == kErrCaptureInvalidated ||
          ev.result == kErrCaptureUnjoined) {
        if (!c) break;
        if (ev.result == 0 && c->status == CaptureState::Open) c->status = CaptureState::Ok;
        if (ev.result == kErrCaptureInvalidated && c->status == CaptureState::Open)
          c->status = CaptureState::Invalidated;
        if (ev.result == 0 && ev.has(Field::Nodes)) c->nodes = ev.nodes;
        end_capture(*c, ev);
      } else if (ev.result == kErrCaptureWrongThread && c) {
        // Another thread's EndCapture terminated the capture; its origin now reads None.
        StreamKey origin = c->origin;
        end_capture(*c, ev);
        streams_[origin].terminated = c;
      } else if (ev.result == kErrIllegalState && call.has_stream) {
        StreamState* ss = streams_.find(call.stream);
        const bool terminated = ss != nullptr && ss->terminated != nullptr;
        if (ss != nullptr) ss->terminated = nullptr;
        // CUDA says the origin was not capturing: its capture ended where the model did not see.
        if (c != nullptr && !terminated && c->origin == call.stream) {
          if (c->valid()) c->state_unknown = true;
          if (c->status == CaptureState::Open) c->status = CaptureState::Unknown;
          end_capture(*c, ev);
        }
      } else if (ev.result != kErrCaptureUnmatched && c != nullptr && c->origin == call.stream) {
        // Any other failure of the origin's EndCapture (a sticky error, a destroyed context):
        // the capture is over without a graph, whatever it held.
        if (c->status == CaptureState::Open) c->status = CaptureState::Ended;
        end_capture(*c, ev);
      }
      break;
    }
    case ApiKind::ExchangeMode:
      if (ev.result == 0 && ev.has(Field::Mode)) {
        ThreadState& thread = thread_state(ev.tid);
        thread.mode = ev.mode;
        thread.mode_exchanged = ev.mode != CaptureMode::Global;
      }
      break;
    case ApiKind::StreamCreate:
      if (ev.result == 0 && call.has_stream) {
        StreamState& ss = streams_[call.stream];
        ss = StreamState{};
        if (ev.has(Field::Flags))
          ss.non_blocking = (ev.flags & 1) != 0;
        else if (ev.has(Field::StreamFlags))
          ss.non_blocking = (ev.stream_flags & 1) != 0;
        else
          ss.non_blocking = false;  // cudaStreamCreate: a blocking stream
      }
      break;
    case ApiKind::StreamDestroy:
      if (ev.result == 0 && call.has_stream) {
        Capture* c = call.stream_capture;
        if (c && call.stream_member < c->members.size())
          c->members[call.stream_member].present = false;
        // Its origin destroyed: the capture is over, no graph made (a later launch of
        // its thread is no escape from it).
        if (c && c->open() && c->origin == call.stream) {
          if (c->status == CaptureState::Open) c->status = CaptureState::Ended;
          end_capture(*c, ev);
        }
        streams_.erase(call.stream);
      }
      break;
    case ApiKind::EventCreate:
    case ApiKind::EventDestroy:
      if (ev.result == 0 && ev.has(Field::Event)) events_.erase(ev.event);
      break;
    case ApiKind::ContextDestroy:
      // Every capture of the context ends with it, no graph made. The trace does not say which
      // context a stream is in: all open captures end (in a process of several contexts, the
      // others' later mistakes go unjudged rather than unrelated work being called escapes).
      if (ev.result == 0)
        while (!open_.empty()) {
          Capture& c = *open_.back();
          if (c.status == CaptureState::Open) c.status = CaptureState::Ended;
          end_capture(c, ev);
        }
      break;
    case ApiKind::EventRecord:
      if (ev.result == 0 && ev.has(Field::Event)) record_event(call);
      note_record_result(call);
      break;
    case ApiKind::StreamWaitEvent:
      if (ev.result == 0 && ev.has(Field::Event) && call.has_stream) wait_event(call);
      break;
    case ApiKind::Enqueue:
    case ApiKind::GraphLaunch:
      if (ev.result == 0) add_work(call);
      break;
    default:
      break;
  }
}

void CaptureModel::begin_capture(const Call& call) {
  const ApiEvent& ev = *call.ev;
  // prepare() ended whatever capture the stream was in: a successful begin proves it idle.
  // Default-initialized (its member initializers), not zeroed first as make_unique would.
  Capture& c = *captures_.emplace_back(std::make_unique_for_overwrite<Capture>());
  c.id = first_id_ + next_id_++;
  c.cuda_id = ev.has(Field::CaptureId) ? ev.capture_id : 0;
  c.origin = call.stream;
  c.mode = ev.has(Field::Mode) ? ev.mode : CaptureMode::Global;
  c.tid = ev.tid;
  c.begin = Site::of(ev);
  c.last_known = c.begin;
  c.non_blocking = call.stream_non_blocking;
  c.members.reserve(2);  // most captures that fork fork once
  Member& origin = c.members.emplace_back();
  origin.stream = call.stream;
  origin.clock.reserve(kClockReserve);
  origin.clock.assign(1, 0);
  charge(c, 1);
  StreamState& ss = streams_[call.stream];
  ss.capture = &c;
  ss.member = 0;
  ss.terminated = nullptr;
  if (call.stream_non_blocking) ss.non_blocking = call.stream_non_blocking;
  thread_state(ev.tid).captures.push_back(&c);
  open_.push_back(&c);
}

void CaptureModel::end_capture(Capture& c, const ApiEvent& ev) {
  c.ended = true;
  if (!c.end.known) c.end = Site::of(ev);
  for (const Member& m : c.members) {
    StreamState* ss = streams_.find(m.stream);
    if (ss == nullptr || ss->capture != &c) continue;
    ss->capture = nullptr;
    // Nothing left to know of the stream: its entry goes (1M clean captures on
    // distinct streams kept 1M entries, and their captures, 1.2 GB).
    if (ss->terminated == nullptr && !ss->non_blocking) streams_.erase(m.stream);
  }
  erase_value(open_, &c);
  if (ThreadState* thread = threads_.find(c.tid)) erase_value(thread->captures, &c);
  if (!c.members.empty()) {  // the members become the lanes: moved, not copied
    c.lanes = std::move(c.members);
    make_lanes(c.lanes, c.status, c.clocks_dropped);
  }
  // Its clocks stop counting: the members' are freed; events recorded in it keep theirs until
  // recorded again (never read: the capture is no longer valid), unless they are many.
  if (c.clock_charge > 4096)
    events_.for_each([&](uint64_t, EventState& es) {
      if (es.capture == &c) free_clock(es.clock);
    });
  clock_entries_ -= std::min(clock_entries_, c.clock_charge);
  c.clock_charge = 0;
  c.members.clear();
  c.members.shrink_to_fit();
}

void CaptureModel::join(Capture& c, StreamKey stream, const EventState* from, const ApiEvent& ev) {
  uint32_t index = static_cast<uint32_t>(c.members.size());
  Member& m = c.members.emplace_back();
  m.stream = stream;
  if (!c.clocks_dropped) {
    m.clock.reserve(std::max<size_t>(index + 1, kClockReserve));
    if (from) m.clock.assign(from->clock.begin(), from->clock.end());
    m.clock.resize(index + 1, 0);
  }
  if (from) {
    m.fork_event = ev.event;
    m.fork_record = from->record;
    m.forked_from = from->member;
  }
  m.fork_wait = Site::of(ev);
  StreamState& ss = streams_[stream];
  ss.capture = &c;
  ss.member = index;
  if (!c.clocks_dropped) charge(c, index + 1);  // last: it may drop them (and move m)
}

void CaptureModel::charge(Capture& c, uint64_t n) {
  c.clock_charge += n;
  clock_entries_ += n;
  while (clock_entries_ > clock_budget_) {
    Capture* largest = nullptr;
    for (Capture* open : open_)
      if (!open->clocks_dropped && (!largest || open->clock_charge > largest->clock_charge))
        largest = open;
    if (!largest || largest->clock_charge == 0) break;
    drop_clocks(*largest);
  }
}

void CaptureModel::release(Capture& c, uint64_t n) {
  n = std::min(n, c.clock_charge);
  c.clock_charge -= n;
  clock_entries_ -= std::min(clock_entries_, n);
}

void CaptureModel::drop_clocks(Capture& c) {
  c.clocks_dropped = true;
  for (Member& m : c.members) free_clock(m.clock);
  events_.for_each([&](uint64_t, EventState& es) {
    if (es.capture == &c) free_clock(es.clock);
  });
  release(c, c.clock_charge);
}

void CaptureModel::record_event(const Call& call) {
  const ApiEvent& ev = *call.ev;
  EventState& es = events_[ev.event];
  es.record = Site::of(ev);
  if (es.capture && es.capture->open() && !es.capture->clocks_dropped)
    release(*es.capture, es.clock.size());
  Capture* c = call.stream_capture;
  if (c && c->valid() && call.stream_member < c->members.size()) {
    c->last_known = es.record;
    const Member& m = c->members[call.stream_member];
    es.capture = c;
    es.member = call.stream_member;
    es.clock = m.clock;
    if (!c->clocks_dropped) charge(*c, es.clock.size());
  } else {
    es.capture = nullptr;
    es.member = 0;
    es.clock.clear();
  }
}

void CaptureModel::note_record_result(const Call& call) {
  Capture* c = call.stream_capture;
  if (!c || !c->valid() || call.stream_member >= c->members.size()) return;
  Member& m = c->members[call.stream_member];
  const ApiEvent& ev = *call.ev;
  m.failed_record = ev.result == 0 ? Site{} : Site::of(ev);
  m.failed_record_result = ev.result;
  m.failed_record_domain = ev.has(Field::Domain) ? ev.domain : call.api.domain;
}

void CaptureModel::wait_event(const Call& call) {
  const ApiEvent& ev = *call.ev;
  const EventState* es = events_.find(ev.event);
  Capture* c = es ? es->capture : nullptr;
  if (c && c->valid()) {
    c->last_known = Site::of(ev);
    if (!call.stream_capture) {
      join(*c, call.stream, es, ev);  // a fork: this stream now belongs to the capture
    } else if (call.stream_capture == c && call.stream_member < c->members.size()) {
      if (!c->clocks_dropped)  // a join
        charge(*c, merge_clock(c->members[call.stream_member].clock, es->clock));
      if (es->member != call.stream_member && es->member < c->members.size()) {
        Member& source = c->members[es->member];
        source.joined_into = call.stream_member;
        source.join_wait = Site::of(ev);
      }
    }
    return;
  }
  // An external wait (cudaEventWaitExternal) inside a capture is a node of its own.
  if (call.stream_capture) add_work(call);
}

void CaptureModel::add_work(const Call& call) {
  add_work(call.stream_capture, call.stream_member, *call.ev);
}

void CaptureModel::grow_clock(Capture& c, uint32_t member) {
  Member& m = c.members[member];
  const size_t before = m.clock.size();
  m.clock.resize(member + 1, 0);
  m.clock[member] = m.work;
  charge(c, m.clock.size() - before);
}

std::vector<std::unique_ptr<Capture>> CaptureModel::retire_ended(bool all) {
  for (auto& c : captures_) c->referenced = !c->ended;
  auto mark = [](Capture* c) {
    if (c) c->referenced = true;
  };
  if (!all) {
    streams_.for_each([&](const StreamKey&, StreamState& ss) {
      mark(ss.capture);
      mark(ss.terminated);
    });
    events_.for_each([&](uint64_t, EventState& es) { mark(es.capture); });
  }
  std::vector<std::unique_ptr<Capture>> retired;
  auto kept = captures_.begin();
  for (auto& c : captures_) {
    if (all || !c->referenced)
      retired.push_back(std::move(c));
    else
      *kept++ = std::move(c);
  }
  captures_.erase(kept, captures_.end());
  if (!all) {
    // Threads with nothing open and the default mode: nothing to remember (a thread per
    // capture would keep an entry each). Here no call is under way that points at one.
    std::vector<uint64_t> idle;
    threads_.for_each([&](uint64_t tid, ThreadState& t) {
      if (t.captures.empty() && !t.mode_exchanged && t.mode == CaptureMode::Global)
        idle.push_back(tid);
    });
    for (uint64_t tid : idle) threads_.erase(tid);
    last_thread_ = nullptr;  // erasing moves other entries
  }
  if (all) {
    open_.clear();
    streams_.for_each(
        [](const StreamKey&, StreamState& ss) { ss.capture = ss.terminated = nullptr; });
    events_.for_each([](uint64_t, EventState& es) { es.capture = nullptr; });
    threads_.for_each([](uint64_t, ThreadState& t) { t.captures.clear(); });
  }
  retained_ = captures_.size();
  return retired;
}

std::vector<Capture*> CaptureModel::thread_exit(uint32_t tid) {
  std::vector<Capture*> open;
  if (ThreadState* thread = threads_.find(tid)) open = thread->captures;
  StreamKey per_thread{trace::kStreamPerThread, tid};
  const StreamState* ss = streams_.find(per_thread);
  if (ss && !ss->capture) streams_.erase(per_thread);
  threads_.erase(tid);
  last_thread_ = nullptr;  // erasing moves other entries
  return open;
}

}  // namespace capguard
