#include "rules/rehearsal.h"

#include <fmt/format.h>

namespace capguard::rules {
namespace {

RuleId rule_id(RehearsalBreak what) {
  switch (what) {
    case RehearsalBreak::Sync:
      return RuleId::kSyncDuringCapture;
    case RehearsalBreak::CapturedEventSync:
      return RuleId::kCapturedEventQuery;
    case RehearsalBreak::Unsafe:
      return RuleId::kUnsafeCallDuringCapture;
    case RehearsalBreak::RelaxedUnsafe:
      return RuleId::kRelaxedModeUnsafeCall;
    case RehearsalBreak::Unsupported:
      return RuleId::kUnsupportedDuringCapture;
    case RehearsalBreak::LegacyStream:
      return RuleId::kLegacyStreamDuringCapture;
    case RehearsalBreak::EscapedSyncCopy:
      return RuleId::kEscapedSyncCopy;
    case RehearsalBreak::EscapedLegacyWork:
      return RuleId::kEscapedLegacyWork;
    case RehearsalBreak::EscapedSideStream:
      return RuleId::kEscapedSideStreamWork;
    case RehearsalBreak::UncapturedEventWait:
      return RuleId::kUncapturedEventWait;
    case RehearsalBreak::UnjoinedFork:
      return RuleId::kUnjoinedFork;
  }
  return RuleId::kCaptureInvalidated;
}

// What CUDA would do, in words (capture-semantics.md).
std::string_view consequence(RehearsalBreak what) {
  switch (what) {
    case RehearsalBreak::Sync:
      return "a capture would make it wait on captured work that has not run: CUDA would return "
             "cudaErrorStreamCaptureUnsupported and invalidate the capture";
    case RehearsalBreak::CapturedEventSync:
      return "the event would be recorded inside the capture: CUDA would return "
             "cudaErrorCapturedEvent and invalidate the capture";
    case RehearsalBreak::Unsafe:
      return "the capture mode prohibits it: CUDA would return "
             "cudaErrorStreamCaptureUnsupported and invalidate the capture";
    case RehearsalBreak::RelaxedUnsafe:
      return "allowed only because the capture would be in relaxed mode; global or thread_local "
             "mode would invalidate it";
    case RehearsalBreak::Unsupported:
      return "stream capture does not support it: CUDA would invalidate the capture";
    case RehearsalBreak::LegacyStream:
      return "the legacy stream synchronizes with a blocking capturing stream: CUDA would "
             "return cudaErrorStreamCaptureImplicit and invalidate the capture";
    case RehearsalBreak::EscapedSyncCopy:
      return "a synchronous copy or memset runs now, at capture time, and would be missing from "
             "the graph";
    case RehearsalBreak::EscapedLegacyWork:
      return "work on the legacy stream would run once, now, and be missing from the graph";
    case RehearsalBreak::EscapedSideStream:
      return "the stream was never forked into the region (no event recorded in it was waited "
             "on): this work would run once, now, and be missing from the graph";
    case RehearsalBreak::UncapturedEventWait:
      return "the event was recorded before the region: a capturing stream waiting on it makes "
             "CUDA return cudaErrorStreamCaptureIsolation (use cudaEventWaitExternal)";
    case RehearsalBreak::UnjoinedFork:
      return "the region's first stream never waited for this stream's last work: "
             "cudaStreamEndCapture would return cudaErrorStreamCaptureUnjoined";
  }
  return {};
}

}  // namespace

const Rule& rehearsal_rule(RehearsalBreak what) {
  const RuleId id = rule_id(what);
  for (const Rule* rule : rule_list())
    if (rule->id == id) return *rule;
  return *rule_list().front();  // every RuleId has a rule (rule_table_test)
}

std::string rehearsal_message(const RehearsalJudgement& judgement, std::string_view region,
                              uint32_t execution_number, trace::CaptureMode mode) {
  const std::string call =
      judgement.what == RehearsalBreak::UnjoinedFork
          ? fmt::format("{} forked into the region, last work {}",
                        describe_stream(judgement.stream), judgement.site.api)
      : judgement.other_thread
          ? fmt::format("{} on thread {} while the region runs on another thread",
                        judgement.site.api, judgement.site.tid)
          : std::string(judgement.site.api);
  return fmt::format("rehearsed region \"{}\" (execution {}, {} mode): {}: {}", region,
                     execution_number, mode_name(mode), call, consequence(judgement.what));
}

std::string_view rehearsal_category(RehearsalBreak what, const ApiInfo& api) {
  if (is_alloc(api.memory)) return "allocation";
  if (is_free(api.memory)) return "free";
  switch (what) {
    case RehearsalBreak::Sync:
    case RehearsalBreak::CapturedEventSync:
      return "synchronize";
    case RehearsalBreak::EscapedSyncCopy:
    case RehearsalBreak::LegacyStream:
      return api.kind == ApiKind::SyncCopy ? "host copy" : "legacy stream";
    case RehearsalBreak::Unsafe:
    case RehearsalBreak::RelaxedUnsafe:
      return "allocation or pinning";
    case RehearsalBreak::UnjoinedFork:
      return "unjoined stream";
    case RehearsalBreak::UncapturedEventWait:
      return "event wait";
    case RehearsalBreak::EscapedLegacyWork:
      return "legacy stream";
    case RehearsalBreak::EscapedSideStream:
      return "stream not forked in";
    default:
      return "unsupported call";
  }
}

}  // namespace capguard::rules
