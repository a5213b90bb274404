// Rule options: a rule's thresholds, each declared once beside its rule's row in
// rules.def (CAPGUARD_RULE_OPTION: default and meaning), shown by `capguard explain`, changed by
// `--rule-option <rule id>.<name>=<value>`, and recorded in the report when not the default.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/report.h"
#include "rules/rule_ids.h"

namespace capguard::rules {

enum class OptionId : uint8_t {
#define CAPGUARD_RULE(symbol, id, severity, summary)
#define CAPGUARD_RULE_OPTION(symbol, rule, name, default_value, meaning) symbol,
#include "rules/rules.def"
};

struct OptionHead {
  RuleId rule;
  std::string_view name;
  uint64_t default_value;
  std::string_view meaning;
};

inline constexpr OptionHead kOptionHeads[] = {
#define CAPGUARD_RULE(symbol, id, severity, summary)
#define CAPGUARD_RULE_OPTION(symbol, rule, name, default_value, meaning) \
  {RuleId::rule, name, default_value, meaning},
#include "rules/rules.def"
};

// The value in force (the default unless set_rule_options changed it).
uint64_t option(OptionId id);

// Sets options from "rule-id.name=value" settings, all or none: a message naming the first bad
// one (unknown rule or option, a value that is not a non-negative integer). Done once, before
// any analysis; options not named get their defaults (set_rule_options({}) resets them all).
std::optional<std::string> set_rule_options(const std::vector<std::string>& settings);

// The options whose value is not the default, for the report.
std::vector<RuleOptionValue> changed_rule_options();

// The options of one rule (its id), for `capguard explain`: "name = default: meaning".
std::vector<std::string> describe_rule_options(std::string_view rule_id);

}  // namespace capguard::rules
