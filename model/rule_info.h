// What a report needs to know about a rule, as data: the rule table (rules/rule_table.h) holds
// one per rule, and renderers and suppressions are handed them rather than reaching for the
// table, so that report/ does not depend on rules/.
#pragma once

#include <span>
#include <string_view>

#include "model/report.h"

namespace capguard {

struct RuleInfo {
  std::string_view id;           // stable kebab-case id, e.g. "sync-during-capture"
  Severity severity;
  std::string_view summary;      // one line
  std::string_view explanation;  // what happens, a minimal example, and the fix
  std::string_view fix;          // one line, printed under each finding
};

// nullptr when `id` is not among `rules`.
inline const RuleInfo* find_rule_in(std::span<const RuleInfo> rules, std::string_view id) {
  for (const RuleInfo& rule : rules)
    if (rule.id == id) return &rule;
  return nullptr;
}

}  // namespace capguard
