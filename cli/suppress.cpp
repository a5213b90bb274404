#include "cli/suppress.h"

#include <cstdio>

#include "cli/output.h"
#include "report/baseline.h"
#include "report/default_suppressions.h"
#include "report/suppressions.h"
#include "report/utf8.h"
#include "rules/rule_table.h"

namespace capguard::cli {

std::optional<std::string> check_suppressions_file(const std::string& path) {
  if (path.empty()) return std::nullopt;
  Suppressions suppressions;
  const auto errors = load_suppressions(path, suppressions, all_rules());
  if (errors.empty()) return std::nullopt;
  std::string message;
  for (const auto& error : errors)
    message += (message.empty() ? "" : "\ncapguard: ") + terminal_safe(error.to_string());
  return message;
}

void apply_suppressions_file(const std::string& path, Report& report) {
  if (path.empty()) return;
  Suppressions suppressions;
  if (!load_suppressions(path, suppressions, all_rules()).empty())
    return;  // checked before the analysis
  const SuppressionStats stats = apply_suppressions(report, suppressions);
  const std::string summary = describe_suppression_stats(suppressions, stats);
  size_t start = 0;  // one "capguard: ..." line per suppression
  while (start < summary.size()) {
    size_t end = summary.find('\n', start);
    if (end == std::string::npos) end = summary.size();
    say(std::string_view(summary).substr(start, end - start));
    start = end + 1;
  }
}

std::optional<std::string> check_baseline_file(const std::string& path) {
  if (path.empty()) return std::nullopt;
  Baseline baseline;
  return load_baseline(path, baseline);
}

void apply_baseline_file(const std::string& path, Report& report) {
  if (path.empty()) return;
  Baseline baseline;
  if (load_baseline(path, baseline)) return;  // checked before the analysis
  const BaselineStats stats = apply_baseline(report, baseline);
  say("baseline " + path + ": " + std::to_string(stats.fresh) + " new, " +
      std::to_string(stats.known) + " known, " + std::to_string(stats.gone) + " gone");
}

}  // namespace capguard::cli
