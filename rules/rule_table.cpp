// The one table of rules, expanded from rules.def in its order. Order is priority: the first
// rule that accepts a call reports it (rules.def says how its rows are ordered).
#include <algorithm>
#include <array>
#include <iterator>
#include <string_view>
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

// model/framework_calls.def names rules by id (model/ cannot know the rules): each id must be a
// row of rules.def, checked here when the table is built.
constexpr bool is_rule_id(std::string_view id) {
  return std::any_of(std::begin(kRuleHeads), std::end(kRuleHeads),
                     [&](const RuleHead& head) { return head.id == id; });
}
constexpr bool are_rule_ids(std::string_view ids) {  // space-separated
  while (!ids.empty()) {
    const size_t space = ids.find(' ');
    if (space != 0 && !is_rule_id(ids.substr(0, space))) return false;
    if (space == std::string_view::npos) break;
    ids.remove_prefix(space + 1);
  }
  return true;
}
static_assert(are_rule_ids("sync-during-capture unjoined-fork") && !are_rule_ids("no-such-rule"));
#define CAPGUARD_FRAMEWORK_CALL(kind, function, file, words, rules, fix)         \
  static_assert(are_rule_ids(rules), "model/framework_calls.def: not a rule of " \
                                     "rules.def: " rules);
#include "model/framework_calls.def"

std::span<const Rule* const> rule_list() { return kRules; }

std::span<const Rule* const> call_rules(bool failed_call, ApiKind kind) {
  constexpr size_t kKinds = kApiKindCount;
  static const auto lists = [] {
    std::array<std::vector<const Rule*>, kKinds + 1> out;  // [kind]: succeeded, [kKinds]: failed
    for (const Rule* rule : kRules) {
      if (!rule->on_call) continue;
      for (size_t k = 0; k < kKinds && rule->accepts == Accepts::AnyCall; ++k)
        if (rule->succeeded_kinds & kind_bit(static_cast<ApiKind>(k))) out[k].push_back(rule);
      out[kKinds].push_back(rule);
    }
    return out;
  }();
  return lists[failed_call ? kKinds : static_cast<size_t>(kind)];
}

std::span<const Rule* const> rehearsal_rules() {
  static const auto list = [] {
    std::vector<const Rule*> out;
    for (const Rule* rule : kRules)
      if (rule->on_rehearsal) out.push_back(rule);
    return out;
  }();
  return list;
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
