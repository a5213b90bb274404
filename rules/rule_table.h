// The one table of rules: stable ids, severity, summary and long explanation.
// `capguard rules` and `capguard explain` print from it; reports link to it.
#pragma once

#include <span>
#include <string_view>

#include "analyzer/report.h"

namespace capguard {

struct RuleInfo {
  std::string_view id;           // stable kebab-case id, e.g. "sync-during-capture"
  Severity severity;
  std::string_view summary;      // one line
  std::string_view explanation;  // what happens, a minimal example, and the fix
  std::string_view fix;          // one line, printed under each finding
};

std::span<const RuleInfo> all_rules();
const RuleInfo* find_rule(std::string_view id);  // nullptr when unknown

}  // namespace capguard
