// Capture rehearsal: what would happen to each call of a region the program ran
// eagerly (a rehearsed NVTX range, trace format v6) if that region were captured in the chosen
// mode. The model follows the region's streams and events and says what a capture would meet at
// each call (RehearsalFacts); the rules judge that as CUDA would answer in a real capture (docs:
// capture-semantics), each rule that declares Rule::on_rehearsal in its own file. Each
// execution of a region is judged on its own; the verdict compares executions (capturable,
// capturable after N warm-up executions, not capturable).
//
// The region's streams become the rehearsed capture's: its first stream with work is the
// origin, a stream that waits on an event recorded on one of its streams is forked in, and a
// forked stream whose last work the origin never waited for is unjoined when the range ends.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/api_catalog.h"
#include "model/capture_model.h"
#include "model/report.h"
#include "trace/event.h"
#include "util/flat_map.h"

namespace capguard {

// What a capture of the region would meet at one call the program ran eagerly in it: what the
// model saw, not a verdict. The rules that declare Rule::on_rehearsal judge it
// (rules/rehearsal.cpp asks them in table order), so a rule is rehearsed by declaring it.
struct RehearsalFacts {
  ApiInfo api;             // the call's kind and memory effect
  uint64_t execution = 0;  // RehearsalModel's serial number of the execution
  trace::CaptureMode mode = trace::CaptureMode::Global;  // the mode rehearsed
  // The calling thread's capture interaction mode (cudaThreadExchangeStreamCaptureMode).
  trace::CaptureMode thread_mode = trace::CaptureMode::Global;
  bool other_thread = false;         // made by a thread other than the region's
  bool has_stream = false;           // the call names a stream
  bool stream_legacy = false;        // ... the legacy stream
  bool stream_in_region = false;     // ... the region's origin or a stream forked into it
  bool region_has_streams = false;   // the region has an origin stream (it put work on one)
  bool origin_legacy = false;        // the origin is the legacy stream
  bool origin_non_blocking = false;  // the origin was created cudaStreamNonBlocking
  bool event_in_region = false;      // its event was recorded on a stream of the region
  bool wait_external = false;        // a wait with cudaEventWaitExternal
  // At the range's end: a stream forked into the region whose last work the origin never
  // waited for (site: that work; stream: the stream).
  bool unjoined_fork = false;
  Site site;         // the call
  StreamKey stream;  // the call's stream
};

// What a region's closed executions add up to; memory bounded by the distinct breaks, however
// many times a loop runs the region.
struct RehearsalRegion {
  std::string name, domain;
  uint32_t begun = 0;   // executions begun
  uint32_t closed = 0;  // executions ended
  // Every break of the closed executions (keys: note()), with the 1-based number, in closing
  // order, of the last execution that made it; `broken_at`: a key's index in `broken`.
  std::vector<std::pair<uint64_t, uint32_t>> broken;
  FlatMap<uint64_t, uint32_t, U64Hash> broken_at;
};

// Bounds a hostile trace cannot push past (docs/security.md): distinct regions, and executions
// open at once (nested or on several threads). A range past them is not rehearsed and the
// analysis says so (RehearsalModel::dropped_ranges).
inline constexpr size_t kMaxRehearsalRegions = 4096;
inline constexpr size_t kMaxOpenRehearsals = 256;

class RehearsalModel {
 public:
  explicit RehearsalModel(trace::CaptureMode mode = trace::CaptureMode::Global) : mode_(mode) {}
  trace::CaptureMode mode() const { return mode_; }

  bool active() const { return !live_.empty(); }
  void range_begin(uint64_t seq, uint32_t tid, uint64_t id, std::string_view domain,
                   std::string_view name);
  // Ends the execution (an id never opened is ignored); its unjoined forks go to `out`. The
  // caller judges and notes them, then calls settle().
  void range_end(uint64_t id, std::vector<RehearsalFacts>& out);
  // Adds the ended executions to their regions' summaries.
  void settle();
  // Observes one call the capture model has prepared (call.own_capture, call.stream_capture: a
  // call inside a real capture is the real rules' alone): appends what a capture of the region
  // would meet at it, for the rules to judge.
  void observe(const Call& call, std::vector<RehearsalFacts>& out);
  // Notes that the execution had the break identified by `key` (same call site, same rule: the
  // same key in every execution); true the first time in that execution.
  bool note(uint64_t execution, uint64_t key);
  // The region of an execution still live, and the execution's number in it (1-based).
  uint32_t region_of(uint64_t execution, uint32_t& number) const;
  // The serial numbers of the executions still open (ranges the trace never closed).
  std::vector<uint64_t> open_ranges() const;

  const std::vector<RehearsalRegion>& regions() const { return regions_; }
  // Ranges not rehearsed because a bound was reached (kMaxRehearsalRegions, kMaxOpenRehearsals).
  uint64_t dropped_ranges() const { return dropped_ranges_; }

 private:
  struct Member {
    StreamKey stream;
    uint32_t work = 0;
    uint32_t joined = 0;  // work the origin waited for
    Site last_work;
  };
  struct RecordedEvent {
    uint32_t member = 0;
    uint32_t work = 0;
  };
  struct Live {  // an open execution: its streams, events and breaks
    uint64_t execution = 0;
    uint64_t range_id = 0;
    uint32_t region = 0;
    uint32_t number = 0;  // 1-based, within the region
    uint32_t tid = 0;
    bool ended = false;  // range_end seen; settle() removes it
    std::optional<bool> origin_non_blocking;
    std::vector<Member> members;  // [0] the origin, once the region put work on a stream
    // Each member's index, so that a call finds its stream at once (100k streams
    // forked into one range, then 300k launches, took 33 s by a scan).
    std::unordered_map<StreamKey, uint32_t, StreamKeyHash> member_index;
    FlatMap<uint64_t, RecordedEvent, U64Hash> events;
    std::vector<uint64_t> keys;  // in the order met
    FlatMap<uint64_t, bool, U64Hash> has_key;
  };

  Live* live_on(uint32_t tid);
  int member_of(const Live& live, const StreamKey& stream) const;
  static void add_member(Live& live, const StreamKey& stream);
  void observe_own(Live& live, const Call& call, std::vector<RehearsalFacts>& out);

  Live* live(uint64_t execution);
  // Whether the thread's previous call in a rehearsal asked if a stream of `live` captures (no
  // stream yet: any), then remembers this call.
  bool follows_capture_query(const Call& call, const Live& live);
  RehearsalFacts facts_of(const Call& call, uint64_t execution) const;

  trace::CaptureMode mode_;
  uint64_t next_execution_ = 1;
  std::vector<RehearsalRegion> regions_;
  std::unordered_map<std::string, uint32_t> region_index_;  // domain '\n' name -> regions_
  uint64_t dropped_ranges_ = 0;
  std::vector<Live> live_;  // open executions, innermost of a thread last
  struct Query {            // a thread's last call, when it asked whether a stream captures
    bool asked = false;
    bool has_stream = false;
    StreamKey stream;
  };
  FlatMap<uint64_t, Query, U64Hash> queried_;
};

// A region's verdict from its items (each with RehearsalItem::last_execution) and its closed
// executions: none broke, capturable; the last one broke, not capturable (`breaks`: what it did,
// `warmup`: what only earlier ones did); else capturable after as many warm-ups as the last one
// that broke (`warmup`: all). Run again on the items left after suppressions.
void settle_verdict(RehearsalInfo& info, std::vector<RehearsalItem> items);

}  // namespace capguard
