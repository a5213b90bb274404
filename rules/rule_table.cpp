// The one table of rules. Order is priority: the first rule that accepts a call reports it, so
// capture-invalidated (the fallback) comes after every rule that can explain an invalidation.
#include <algorithm>
#include <array>
#include <vector>

#include "rules/rule.h"

namespace capguard::rules {

extern const Rule kSyncDuringCapture;
extern const Rule kCapturedEventQuery;
extern const Rule kUnsafeCallDuringCapture;
extern const Rule kLegacyStreamDuringCapture;
extern const Rule kUnjoinedFork;
extern const Rule kCrossCaptureEventWait;
extern const Rule kUncapturedEventWait;
extern const Rule kEndCaptureMisuse;
extern const Rule kUnsupportedDuringCapture;
extern const Rule kCaptureInvalidated;
extern const Rule kEscapedSyncCopy;
extern const Rule kEscapedLegacyWork;
extern const Rule kEscapedSideStreamWork;
extern const Rule kCaptureNeverEnded;
extern const Rule kRelaxedModeUnsafeCall;
// Graph lifetime (issue 9): they judge GraphFacts (on_graph), not calls.
extern const Rule kReplayAfterFree;
extern const Rule kGraphReplayFailed;
extern const Rule kGraphRebuiltEveryStep;
extern const Rule kGraphSpecializationGrowth;
extern const Rule kGraphUpdateRejected;

namespace {
constinit const Rule* const kRules[] = {
    &kSyncDuringCapture,         &kCapturedEventQuery, &kUnsafeCallDuringCapture,
    &kLegacyStreamDuringCapture, &kUnjoinedFork,       &kCrossCaptureEventWait,
    &kUncapturedEventWait,       &kEndCaptureMisuse,   &kUnsupportedDuringCapture,
    &kCaptureInvalidated,        &kEscapedSyncCopy,    &kEscapedLegacyWork,
    &kEscapedSideStreamWork,     &kCaptureNeverEnded,  &kRelaxedModeUnsafeCall,
    &kReplayAfterFree,           &kGraphReplayFailed,  &kGraphRebuiltEveryStep,
    &kGraphSpecializationGrowth, &kGraphUpdateRejected,
};
}  // namespace

std::span<const Rule* const> rule_list() { return kRules; }

std::span<const Rule* const> call_rules(bool failed_call) {
  static const auto lists = [] {
    std::array<std::vector<const Rule*>, 2> out;  // [0] any call, [1] failed calls
    for (const Rule* rule : kRules) {
      if (!rule->on_call) continue;
      if (rule->accepts == Accepts::AnyCall) out[0].push_back(rule);
      out[1].push_back(rule);
    }
    return out;
  }();
  return lists[failed_call ? 1 : 0];
}

}  // namespace capguard::rules

namespace capguard {

std::span<const RuleInfo> all_rules() {
  static const auto infos = [] {
    std::array<RuleInfo, std::size(rules::kRules)> out{};
    std::transform(std::begin(rules::kRules), std::end(rules::kRules), out.begin(),
                   [](const rules::Rule* r) { return r->info; });
    return out;
  }();
  return infos;
}

const RuleInfo* find_rule(std::string_view id) {
  for (const RuleInfo& info : all_rules())
    if (info.id == id) return &info;
  return nullptr;
}

}  // namespace capguard
