#include "rules/rule_options.h"

#include <algorithm>
#include <charconv>
#include <iterator>


namespace capguard::rules {
namespace {

constexpr size_t kOptions = std::size(kOptionHeads);

// Set once, before the analysis, from the command line; read by the rules during it.
uint64_t g_values[kOptions] = {
#define CAPGUARD_RULE(symbol, id, severity, summary)
#define CAPGUARD_RULE_OPTION(symbol, rule, name, default_value, meaning) default_value,
#include "rules/rules.def"
};

std::string_view rule_id_of(const OptionHead& head) {
  return kRuleHeads[static_cast<size_t>(head.rule)].id;
}

}  // namespace

uint64_t option(OptionId id) { return g_values[static_cast<size_t>(id)]; }

std::optional<std::string> set_rule_options(const std::vector<std::string>& settings) {
  uint64_t values[kOptions];  // options not named: their defaults
  for (size_t i = 0; i < kOptions; ++i) values[i] = kOptionHeads[i].default_value;
  for (const std::string& setting : settings) {
    const size_t equals = setting.find('=');
    const size_t dot = setting.rfind('.', equals);
    if (equals == std::string::npos || dot == std::string::npos)
      return "--rule-option " + setting + ": write RULE.NAME=VALUE";
    const std::string_view rule(setting.data(), dot);
    const std::string_view name(setting.data() + dot + 1, equals - dot - 1);
    const std::string_view text(setting.data() + equals + 1, setting.size() - equals - 1);
    size_t index = kOptions;
    for (size_t i = 0; i < kOptions; ++i)
      if (rule_id_of(kOptionHeads[i]) == rule && kOptionHeads[i].name == name) index = i;
    if (index == kOptions) {
      std::string known;
      for (const OptionHead& head : kOptionHeads)
        known += (known.empty() ? "" : ", ") + std::string(rule_id_of(head)) + "." +
                 std::string(head.name);
      return "--rule-option " + setting + ": no such rule option (" + known + ")";
    }
    uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size())
      return "--rule-option " + setting + ": the value must be a non-negative integer";
    values[index] = value;
  }
  std::copy(std::begin(values), std::end(values), g_values);
  return std::nullopt;
}

std::vector<RuleOptionValue> changed_rule_options() {
  std::vector<RuleOptionValue> changed;
  for (size_t i = 0; i < kOptions; ++i)
    if (g_values[i] != kOptionHeads[i].default_value)
      changed.push_back({std::string(rule_id_of(kOptionHeads[i])),
                         std::string(kOptionHeads[i].name), g_values[i],
                         kOptionHeads[i].default_value});
  return changed;
}

std::vector<std::string> describe_rule_options(std::string_view rule_id) {
  std::vector<std::string> lines;
  for (const OptionHead& head : kOptionHeads)
    if (rule_id_of(head) == rule_id)
      lines.push_back(std::string(head.name) + " = " + std::to_string(head.default_value) + ": " +
                      std::string(head.meaning));
  return lines;
}

}  // namespace capguard::rules
