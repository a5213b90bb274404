// The one table of rules: stable ids, severity, summary and long explanation.
// `capguard rules` and `capguard explain` print from it; reports link to it.
#pragma once

#include <span>
#include <string_view>

#include "model/rule_info.h"

namespace capguard {

std::span<const RuleInfo> all_rules();
const RuleInfo* find_rule(std::string_view id);  // nullptr when unknown

}  // namespace capguard
