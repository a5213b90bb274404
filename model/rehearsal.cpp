#include "model/rehearsal.h"

#include <algorithm>

namespace capguard {

using trace::CaptureMode;
using trace::Field;

namespace {

constexpr uint32_t kWaitExternal = 0x1;  // cudaEventWaitExternal / CU_EVENT_WAIT_EXTERNAL

// Calls that put work on a stream, or take part in its ordering: they make the region's origin.
bool orders_stream(ApiKind kind) {
  return kind == ApiKind::Enqueue || kind == ApiKind::GraphLaunch || kind == ApiKind::EventRecord ||
         kind == ApiKind::StreamWaitEvent;
}

}  // namespace

void RehearsalModel::range_begin(uint64_t, uint32_t tid, uint64_t id, std::string_view domain,
                                 std::string_view name) {
  std::string key = std::string(domain) + '\n' + std::string(name);
  auto known = region_index_.find(key);
  if (live_.size() >= kMaxOpenRehearsals ||
      (known == region_index_.end() && regions_.size() >= kMaxRehearsalRegions)) {
    ++dropped_ranges_;  // its end finds no execution and is ignored
    return;
  }
  if (known == region_index_.end()) {
    known = region_index_.emplace(std::move(key), static_cast<uint32_t>(regions_.size())).first;
    RehearsalRegion& fresh = regions_.emplace_back();
    fresh.name = name;
    fresh.domain = domain;
  }
  RehearsalRegion& region = regions_[known->second];
  Live& live = live_.emplace_back();
  live.execution = next_execution_++;
  live.range_id = id;
  live.region = known->second;
  live.number = ++region.begun;
  live.tid = tid;
}

void RehearsalModel::range_end(uint64_t id, std::vector<RehearsalJudgement>& out) {
  const auto live = std::find_if(live_.begin(), live_.end(),
                                 [&](const Live& l) { return l.range_id == id && !l.ended; });
  if (live == live_.end()) return;
  // The origin must have waited for every forked stream's last work (cudaStreamEndCapture
  // answers 904 otherwise).
  for (size_t m = 1; m < live->members.size(); ++m) {
    const Member& member = live->members[m];
    if (member.work > member.joined)
      out.push_back(
          {RehearsalBreak::UnjoinedFork, live->execution, false, member.last_work, member.stream});
  }
  live->ended = true;
}

void RehearsalModel::settle() {
  for (auto it = live_.begin(); it != live_.end();) {
    if (!it->ended) {
      ++it;
      continue;
    }
    RehearsalRegion& region = regions_[it->region];
    ++region.closed;
    for (uint64_t key : it->keys) {
      if (const uint32_t* at = region.broken_at.find(key)) {
        region.broken[*at].second = region.closed;
      } else {
        region.broken_at[key] = static_cast<uint32_t>(region.broken.size());
        region.broken.emplace_back(key, region.closed);
      }
    }
    it = live_.erase(it);
  }
}

RehearsalModel::Live* RehearsalModel::live(uint64_t execution) {
  for (Live& l : live_)
    if (l.execution == execution) return &l;
  return nullptr;
}

bool RehearsalModel::note(uint64_t execution, uint64_t key) {
  Live* l = live(execution);
  if (l == nullptr || l->has_key.find(key) != nullptr) return false;
  l->has_key[key] = true;
  l->keys.push_back(key);
  return true;
}

uint32_t RehearsalModel::region_of(uint64_t execution, uint32_t& number) const {
  for (const Live& l : live_) {
    if (l.execution != execution) continue;
    number = l.number;
    return l.region;
  }
  number = 0;
  return 0;
}

std::vector<uint64_t> RehearsalModel::open_ranges() const {
  std::vector<uint64_t> ids;
  for (const Live& l : live_)
    if (!l.ended) ids.push_back(l.range_id);
  return ids;
}

RehearsalModel::Live* RehearsalModel::live_on(uint32_t tid) {
  for (auto it = live_.rbegin(); it != live_.rend(); ++it)
    if (it->tid == tid && !it->ended) return &*it;
  return nullptr;
}

int RehearsalModel::member_of(const Live& live, const StreamKey& stream) const {
  for (size_t m = 0; m < live.members.size(); ++m)
    if (live.members[m].stream == stream) return static_cast<int>(m);
  return -1;
}

void RehearsalModel::judge(const Call& call, std::vector<RehearsalJudgement>& out) {
  // A real capture's calls are judged by the real rules.
  if (!active() || call.own_capture != nullptr || call.stream_capture != nullptr) return;
  const auto open = [](const Live& l) { return !l.ended; };
  const auto first_open = std::find_if(live_.begin(), live_.end(), open);
  if (first_open == live_.end()) return;
  const trace::ApiEvent& ev = *call.ev;
  const ApiKind kind = call.api.kind;
  // Code that asks whether its stream captures right before an unsafe call takes another path
  // when it does: PyTorch's caching allocator allocates in relaxed mode then (c10's
  // cudaMallocMaybeCapturing), on the region's thread or on one working on the region's stream
  // (the autograd thread). What that path does is not in an eager run: not judged.
  Live* own = live_on(ev.tid);
  if (follows_capture_query(call, own != nullptr ? *own : *first_open) && kind == ApiKind::Unsafe)
    return;
  if (own != nullptr) return judge_own(*own, call, out);
  // Another thread: a global-mode capture prohibits its unsafe calls and device syncs.
  if (mode_ != CaptureMode::Global) return;
  if ((kind == ApiKind::Unsafe && prohibits_unsafe(call, false)) || kind == ApiKind::DeviceSync) {
    const RehearsalBreak what =
        kind == ApiKind::Unsafe ? RehearsalBreak::Unsafe : RehearsalBreak::Sync;
    out.push_back({what, first_open->execution, true, Site::of(ev), call.stream});
  }
}

void RehearsalModel::judge_own(Live& live, const Call& call, std::vector<RehearsalJudgement>& out) {
  const trace::ApiEvent& ev = *call.ev;
  const ApiKind kind = call.api.kind;
  const auto judged = [&](RehearsalBreak what) {
    out.push_back({what, live.execution, false, Site::of(ev), call.stream});
  };
  if (call.has_stream && live.members.empty() && orders_stream(kind)) {
    live.members.push_back({call.stream, 0, 0, {}});
    live.origin_non_blocking = call.stream_non_blocking;
  }
  const int member = call.has_stream ? member_of(live, call.stream) : -1;
  const bool origin_legacy = !live.members.empty() && live.members[0].stream.is_legacy();
  // Legacy-stream use beside a capture of another stream: 906 when that stream blocks, an
  // escape otherwise (capture-semantics.md, section 1 and 2).
  const bool non_blocking_origin = live.origin_non_blocking == true;
  switch (kind) {
    case ApiKind::DeviceSync:
      return judged(RehearsalBreak::Sync);
    case ApiKind::StreamSync:
      if (member >= 0 || call.stream_is_legacy() || live.members.empty())
        judged(RehearsalBreak::Sync);
      return;
    case ApiKind::EventSync:
      if (call.has_stream || !ev.has(Field::Event)) return;
      if (live.events.find(ev.event) != nullptr) judged(RehearsalBreak::CapturedEventSync);
      return;
    case ApiKind::Unsafe:
      if (mode_ == CaptureMode::Relaxed) return judged(RehearsalBreak::RelaxedUnsafe);
      if (prohibits_unsafe(call, true)) judged(RehearsalBreak::Unsafe);
      return;
    case ApiKind::Unsupported:
      return judged(RehearsalBreak::Unsupported);
    case ApiKind::SyncCopy:
      // The capture's stream decides: a non-blocking one lets the copy run now, uncaptured;
      // a blocking one (or the legacy stream the region ran on) is invalidated.
      return judged(non_blocking_origin ? RehearsalBreak::EscapedSyncCopy
                                        : RehearsalBreak::LegacyStream);
    default:
      break;
  }
  if (!call.has_stream || !orders_stream(kind)) return;
  if (kind == ApiKind::StreamWaitEvent) {
    const RecordedEvent* recorded = ev.has(Field::Event) ? live.events.find(ev.event) : nullptr;
    if (recorded == nullptr) {
      // An event recorded before the region: a capture waiting on it fails (905) unless the
      // wait is external.
      if (member >= 0 && !(ev.has(Field::Flags) && (ev.flags & kWaitExternal)))
        judged(RehearsalBreak::UncapturedEventWait);
      return;
    }
    if (member < 0) {  // a fork: the stream joins the rehearsed capture
      live.members.push_back({call.stream, 0, 0, {}});
    } else if (member == 0 && recorded->member != 0) {
      Member& from = live.members[recorded->member];
      from.joined = std::max(from.joined, recorded->work);
    }
    return;
  }
  if (member < 0) {
    if (call.stream_is_legacy() && !origin_legacy) {
      judged(non_blocking_origin ? RehearsalBreak::EscapedLegacyWork
                                 : RehearsalBreak::LegacyStream);
    } else if (kind != ApiKind::EventRecord) {
      judged(RehearsalBreak::EscapedSideStream);
    }
    return;
  }
  Member& m = live.members[static_cast<size_t>(member)];
  if (kind == ApiKind::EventRecord) {
    if (ev.has(Field::Event)) live.events[ev.event] = {static_cast<uint32_t>(member), m.work};
    return;
  }
  ++m.work;
  m.last_work = Site::of(ev);
}

bool RehearsalModel::follows_capture_query(const Call& call, const Live& live) {
  Query& last = queried_[call.ev->tid];
  const bool follows =
      last.asked && (last.has_stream ? member_of(live, last.stream) >= 0 : live.members.empty());
  last = {call.api.kind == ApiKind::CaptureQuery, call.has_stream, call.stream};
  return follows;
}

bool RehearsalModel::prohibits_unsafe(const Call& call, bool own) const {
  // The calling thread's interaction mode decides (cudaThreadExchangeStreamCaptureMode): relaxed
  // allows everything; thread_local prohibits only while the thread itself captures.
  const CaptureMode thread_mode = call.thread != nullptr ? call.thread->mode : CaptureMode::Global;
  if (thread_mode == CaptureMode::Relaxed) return false;
  return own || thread_mode == CaptureMode::Global;
}

void settle_verdict(RehearsalInfo& info, std::vector<RehearsalItem> items) {
  info.warmup.clear();
  info.breaks.clear();
  info.warmups = 0;
  uint32_t last = 0;
  for (const RehearsalItem& item : items) last = std::max(last, item.last_execution);
  RehearsalVerdict verdict = RehearsalVerdict::Capturable;
  if (last != 0 && last >= info.executions) {
    verdict = RehearsalVerdict::NotCapturable;
  } else if (last != 0) {
    verdict = RehearsalVerdict::AfterWarmup;
    info.warmups = last;
  }
  info.verdict = verdict;
  for (RehearsalItem& item : items)
    (verdict == RehearsalVerdict::NotCapturable && item.last_execution >= info.executions
         ? info.breaks
         : info.warmup)
        .push_back(std::move(item));
}

}  // namespace capguard
