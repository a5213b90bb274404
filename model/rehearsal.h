// Capture rehearsal (issue 19): what would happen to each call of a region the program ran
// eagerly (a rehearsed NVTX range, trace format v6) if that region were captured in the chosen
// mode. The judgement follows what CUDA answers in a real capture (docs: capture-semantics),
// by API kind: the rules name it with their own ids (rules/rehearsal.cpp). Each execution of a
// region is judged on its own; the verdict compares executions (capturable, capturable after N
// warm-up executions, not capturable).
//
// The region's streams become the rehearsed capture's: its first stream with work is the
// origin, a stream that waits on an event recorded on one of its streams is forked in, and a
// forked stream whose last work the origin never waited for is unjoined when the range ends.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/api_catalog.h"
#include "model/capture_model.h"
#include "trace/event.h"
#include "util/flat_map.h"

namespace capguard {

// Why a call would break (or escape) a capture of the region; rules/rehearsal.cpp maps each to
// its rule id and words it.
enum class RehearsalBreak : uint8_t {
  Sync,                 // synchronizes a stream of the region, the legacy stream or the device
  CapturedEventSync,    // queries or waits for an event recorded in the region
  Unsafe,               // allocation, free, pinning: prohibited in global/thread_local mode
  RelaxedUnsafe,        // the same, allowed only because the mode is relaxed
  Unsupported,          // not capturable at all
  LegacyStream,         // legacy-stream use (a blocking capture: CUDA answers 906)
  EscapedSyncCopy,      // a synchronous copy/memset: runs now, absent from the graph
  EscapedLegacyWork,    // async work on the legacy stream: absent from the graph
  EscapedSideStream,    // work on a stream never forked into the region
  UncapturedEventWait,  // a region stream waits on an event recorded outside the region
  UnjoinedFork,         // a forked stream's last work was never joined back
};

struct RehearsalJudgement {
  RehearsalBreak what = RehearsalBreak::Sync;
  uint32_t execution = 0;     // index into RehearsalModel's executions
  bool other_thread = false;  // made by a thread other than the region's
  Site site;                  // the call (for UnjoinedFork: the stream's last work)
  StreamKey stream;           // UnjoinedFork: the stream left unjoined
};

// A region's verdict over its executions.
enum class RehearsalVerdict : uint8_t { Capturable, AfterWarmup, NotCapturable };

struct RehearsalExecution {
  uint32_t region = 0;  // index into regions()
  uint32_t tid = 0;
  uint64_t range_id = 0;
  Site begin;
  bool open = true;
  std::vector<uint64_t> keys;  // the breaks it had (keys given by the caller), sorted at end
};

struct RehearsalRegion {
  std::string name, domain;
  std::vector<uint32_t> executions;  // indexes into executions(), in order
};

class RehearsalModel {
 public:
  explicit RehearsalModel(trace::CaptureMode mode = trace::CaptureMode::Global) : mode_(mode) {}
  trace::CaptureMode mode() const { return mode_; }

  bool active() const { return open_ != 0; }
  void range_begin(uint64_t seq, uint32_t tid, uint64_t id, std::string_view domain,
                   std::string_view name);
  // Closes the execution (an id never opened is ignored); its unjoined forks go to `out`.
  void range_end(uint64_t id, std::vector<RehearsalJudgement>& out);
  // Judges one call the capture model has prepared (call.own_capture, call.stream_capture: a
  // call inside a real capture is the real rules' alone). Appends what it would break.
  void judge(const Call& call, std::vector<RehearsalJudgement>& out);
  // Notes that execution `execution` had the break identified by `key` (same call site, same
  // rule: the same key in every execution).
  // True the first time in that execution.
  bool note(uint32_t execution, uint64_t key);

  const std::vector<RehearsalRegion>& regions() const { return regions_; }
  const std::vector<RehearsalExecution>& executions() const { return executions_; }
  // The verdict from the region's closed executions; `warmups`: executions before the last
  // that broke anything (AfterWarmup).
  RehearsalVerdict verdict(const RehearsalRegion& region, uint32_t& warmups) const;

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
  struct Live {  // an open execution's streams and events
    uint32_t execution = 0;
    std::optional<bool> origin_non_blocking;
    std::vector<Member> members;  // [0] the origin, once the region put work on a stream
    FlatMap<uint64_t, RecordedEvent, U64Hash> events;
  };

  Live* live_on(uint32_t tid);
  int member_of(const Live& live, const StreamKey& stream) const;
  void judge_own(Live& live, const Call& call, std::vector<RehearsalJudgement>& out);

  trace::CaptureMode mode_;
  uint32_t open_ = 0;
  std::vector<RehearsalRegion> regions_;
  std::vector<RehearsalExecution> executions_;
  std::vector<Live> live_;  // open executions, innermost of a thread last
};

const char* to_string(RehearsalVerdict verdict);  // capturable | capturable_after_warmup | ...

}  // namespace capguard
