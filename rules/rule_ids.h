// Each rule's id, severity and summary, expanded from rules.def: a rule's file names its row
// (Rule::id) and adds only its explanation and fix, so those three are written once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/rule_info.h"

namespace capguard::rules {

enum class RuleId : uint8_t {
#define CAPGUARD_RULE(symbol, id, severity, summary) symbol,
#include "rules/rules.def"
};

struct RuleHead {
  std::string_view id;
  Severity severity;
  std::string_view summary;
};

inline constexpr RuleHead kRuleHeads[] = {
#define CAPGUARD_RULE(symbol, id, severity, summary) {id, Severity::severity, summary},
#include "rules/rules.def"
};

}  // namespace capguard::rules
