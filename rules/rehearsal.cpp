#include "rules/rehearsal.h"

#include <fmt/format.h>

namespace capguard::rules {

const Rule* rehearsal_rule(const RehearsalFacts& facts, RehearsalWords& words) {
  for (const Rule* rule : rehearsal_rules())
    if (rule->on_rehearsal(facts, words)) return rule;
  return nullptr;
}

std::string rehearsal_message(const RehearsalFacts& facts, const RehearsalWords& words,
                              std::string_view region, uint32_t execution_number) {
  const std::string call =
      facts.unjoined_fork  ? fmt::format("{} forked into the region, last work {}",
                                         describe_stream(facts.stream), facts.site.api)
      : facts.other_thread ? fmt::format("{} on thread {} while the region runs on another thread",
                                         facts.site.api, facts.site.tid)
                           : std::string(facts.site.api);
  return fmt::format("rehearsed region \"{}\" (execution {}, {} mode): {}: {}", region,
                     execution_number, mode_name(facts.mode), call, words.consequence);
}

std::string_view rehearsal_category(const RehearsalWords& words, const ApiInfo& api) {
  if (is_alloc(api.memory)) return "allocation";
  if (is_free(api.memory)) return "free";
  return words.category;
}

bool capture_prohibits_unsafe(const RehearsalFacts& facts) {
  if (facts.thread_mode == trace::CaptureMode::Relaxed) return false;
  return !facts.other_thread || facts.thread_mode == trace::CaptureMode::Global;
}

bool escapes_to_legacy_stream(const RehearsalFacts& facts) {
  const ApiKind kind = facts.api.kind;
  return !facts.other_thread && facts.stream_legacy && !facts.stream_in_region &&
         !facts.origin_legacy &&
         (kind == ApiKind::Enqueue || kind == ApiKind::GraphLaunch || kind == ApiKind::EventRecord);
}

}  // namespace capguard::rules
