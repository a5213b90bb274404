// capguard rules / capguard explain RULE: print from the one rule table.
#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.h"
#include "model/framework_calls.h"
#include "rules/rule_options.h"
#include "report/default_suppressions.h"
#include "rules/rule_table.h"

namespace capguard::cli {

int rules_command() {
  size_t width = 0;
  for (const auto& rule : all_rules()) width = std::max(width, rule.id.size());
  for (const auto& rule : all_rules())
    fmt::print("{:<{}}  {:<7}  {}\n", rule.id, width, to_string(rule.severity), rule.summary);
  return 0;
}

int explain_command(const std::string& id) {
  const RuleInfo* rule = find_rule(id);
  if (rule == nullptr) {
    std::string known;
    for (const auto& r : all_rules()) known += fmt::format("{}{}", known.empty() ? "" : ", ", r.id);
    fmt::print(stderr, "capguard: unknown rule '{}'; known rules: {}\n", id, known);
    return kExitUsage;
  }
  fmt::print("{} ({})\n\n{}\n\n{}\n", rule->id, to_string(rule->severity), rule->summary,
             rule->explanation);
  if (!rule->fix.empty()) fmt::print("\nfix: {}\n", rule->fix);
  // Its options (rules.def), changed with --rule-option RULE.NAME=VALUE.
  const std::vector<std::string> options = rules::describe_rule_options(rule->id);
  if (!options.empty()) fmt::print("\noptions (--rule-option {}.NAME=VALUE):\n", rule->id);
  for (const std::string& line : options) fmt::print("  {}\n", line);
  // The framework forms of the rule (model/framework_calls.def).
  bool heading = false;
  for (const FrameworkCall& call : framework_calls()) {
    const std::string rules = " " + std::string(call.rules) + " ";
    if (rules.find(" " + std::string(rule->id) + " ") == std::string::npos) continue;
    if (!heading) fmt::print("\nWhat it looks like in frameworks (the report names it):\n");
    heading = true;
    fmt::print("  {}: {}\n", call.words, call.fix);
  }
  // The fix in each framework's words (model/framework_fixes.def), which the report gives when
  // the culprit is that framework's code.
  heading = false;
  for (const FrameworkFix& fix : framework_fixes()) {
    if (fix.rule != rule->id) continue;
    if (!heading) fmt::print("\nThe fix in a framework's words (the report gives it there):\n");
    heading = true;
    fmt::print("  {}: {}\n", framework_name(fix.framework), fix.fix);
  }
  return 0;
}

int default_suppressions_command() {
  const std::string_view text = default_suppressions_text();
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace capguard::cli
