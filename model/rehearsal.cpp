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

void RehearsalModel::range_end(uint64_t id, std::vector<RehearsalFacts>& out) {
  const auto live = std::find_if(live_.begin(), live_.end(),
                                 [&](const Live& l) { return l.range_id == id && !l.ended; });
  if (live == live_.end()) return;
  // The origin must have waited for every forked stream's last work (cudaStreamEndCapture
  // answers 904 otherwise).
  for (size_t m = 1; m < live->members.size(); ++m) {
    const Member& member = live->members[m];
    if (member.work <= member.joined) continue;
    RehearsalFacts& facts = out.emplace_back();
    facts.execution = live->execution;
    facts.mode = mode_;
    facts.unjoined_fork = true;
    facts.site = member.last_work;
    facts.stream = member.stream;
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
  const auto it = live.member_index.find(stream);
  return it == live.member_index.end() ? -1 : static_cast<int>(it->second);
}

void RehearsalModel::add_member(Live& live, const StreamKey& stream) {
  live.member_index.emplace(stream, static_cast<uint32_t>(live.members.size()));
  live.members.push_back({stream, 0, 0, {}});
}

RehearsalFacts RehearsalModel::facts_of(const Call& call, uint64_t execution) const {
  RehearsalFacts facts;
  facts.api = call.api;
  facts.execution = execution;
  facts.mode = mode_;
  facts.thread_mode = call.thread != nullptr ? call.thread->mode : CaptureMode::Global;
  facts.site = Site::of(*call.ev);
  facts.stream = call.stream;
  return facts;
}

void RehearsalModel::observe(const Call& call, std::vector<RehearsalFacts>& out) {
  // A real capture's calls are judged by the real rules.
  if (!active() || call.own_capture != nullptr || call.stream_capture != nullptr) return;
  const auto open = [](const Live& l) { return !l.ended; };
  const auto first_open = std::find_if(live_.begin(), live_.end(), open);
  if (first_open == live_.end()) return;
  // Code that asks whether its stream captures right before an unsafe call takes another path
  // when it does: PyTorch's caching allocator allocates in relaxed mode then (c10's
  // cudaMallocMaybeCapturing), on the region's thread or on one working on the region's stream
  // (the autograd thread). What that path does is not in an eager run: not observed.
  Live* own = live_on(call.ev->tid);
  if (follows_capture_query(call, own != nullptr ? *own : *first_open) &&
      call.api.kind == ApiKind::Unsafe)
    return;
  if (own != nullptr) return observe_own(*own, call, out);
  // Another thread, while the region runs: what a capture of it prohibits process-wide.
  RehearsalFacts& facts = out.emplace_back(facts_of(call, first_open->execution));
  facts.other_thread = true;
}

void RehearsalModel::observe_own(Live& live, const Call& call, std::vector<RehearsalFacts>& out) {
  const trace::ApiEvent& ev = *call.ev;
  const ApiKind kind = call.api.kind;
  if (call.has_stream && live.members.empty() && orders_stream(kind)) {
    add_member(live, call.stream);
    live.origin_non_blocking = call.stream_non_blocking;
  }
  const int member = call.has_stream ? member_of(live, call.stream) : -1;
  const RecordedEvent* recorded = ev.has(Field::Event) ? live.events.find(ev.event) : nullptr;
  // What the call meets, before it changes the region's streams.
  RehearsalFacts& facts = out.emplace_back(facts_of(call, live.execution));
  facts.has_stream = call.has_stream;
  facts.stream_legacy = call.has_stream && call.stream_is_legacy();
  facts.stream_in_region = member >= 0;
  facts.region_has_streams = !live.members.empty();
  facts.origin_legacy = !live.members.empty() && live.members[0].stream.is_legacy();
  facts.origin_non_blocking = live.origin_non_blocking == true;
  facts.event_in_region = recorded != nullptr;
  facts.wait_external = ev.has(Field::Flags) && (ev.flags & kWaitExternal) != 0;

  if (!call.has_stream || !orders_stream(kind) || (member < 0 && kind != ApiKind::StreamWaitEvent))
    return;
  if (kind == ApiKind::StreamWaitEvent) {
    if (recorded == nullptr) return;
    if (member < 0) {  // a fork: the stream joins the rehearsed capture
      add_member(live, call.stream);
    } else if (member == 0 && recorded->member != 0) {
      Member& from = live.members[recorded->member];
      from.joined = std::max(from.joined, recorded->work);
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
