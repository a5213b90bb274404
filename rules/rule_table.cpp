// The one table of rules, expanded from rules.def in its order. Order is priority: the first
// rule that accepts a call reports it (rules.def says how its rows are ordered).
#include <algorithm>
#include <array>
#include <vector>

#include "rules/rule.h"

namespace capguard::rules {

#define CAPGUARD_RULE(symbol, id, severity, summary) extern const Rule symbol;
#include "rules/rules.def"

namespace {
constinit const Rule* const kRules[] = {
#define CAPGUARD_RULE(symbol, id, severity, summary) &symbol,
#include "rules/rules.def"
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
                   [](const rules::Rule* r) { return r->info(); });
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
