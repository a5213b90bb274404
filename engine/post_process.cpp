#include "engine/post_process.h"

#include "engine/rehearsal_items.h"
#include "report/baseline.h"
#include "report/default_suppressions.h"
#include "report/suppressions.h"
#include "rules/rule_table.h"

namespace capguard {
namespace {

void apply_suppressions_file(const std::string& path, Report& report,
                             const std::function<void(std::string_view)>& say) {
  Suppressions suppressions;
  if (!load_suppressions(path, suppressions, all_rules()).empty())
    return;  // checked before the analysis
  const SuppressionStats stats = apply_suppressions(report, suppressions);
  const std::string summary = describe_suppression_stats(suppressions, stats);
  size_t start = 0;  // one line per suppression
  while (start < summary.size()) {
    size_t end = summary.find('\n', start);
    if (end == std::string::npos) end = summary.size();
    say(std::string_view(summary).substr(start, end - start));
    start = end + 1;
  }
}

void apply_baseline_file(const std::string& path, Report& report,
                         const std::function<void(std::string_view)>& say) {
  Baseline baseline;
  if (load_baseline(path, baseline)) return;  // checked before the analysis
  const BaselineStats stats = apply_baseline(report, baseline);
  say("baseline " + path + ": " + std::to_string(stats.fresh) + " new, " +
      std::to_string(stats.known) + " known, " + std::to_string(stats.gone) + " gone");
  if (stats.unvouched == 0) return;
  std::string where;
  for (const std::string& one : stats.unvouched_where) where += (where.empty() ? "" : ", ") + one;
  if (stats.unvouched > stats.unvouched_where.size())
    where += " and " + std::to_string(stats.unvouched - stats.unvouched_where.size()) + " more";
  say("baseline " + path + " cannot vouch for " + std::to_string(stats.unvouched) +
      (stats.unvouched == 1 ? " finding" : " findings") +
      " it lists by rule, API and module, kept as new (" + where +
      "): in code without file and line only the offset tells one call from another, and a "
      "JSON report has none; use a SARIF baseline (-o sarif:FILE) for such code");
}

}  // namespace

std::vector<std::string> check_suppressions_file(const std::string& path) {
  std::vector<std::string> problems;
  if (path.empty()) return problems;
  Suppressions suppressions;
  for (const auto& error : load_suppressions(path, suppressions, all_rules()))
    problems.push_back(error.to_string());
  return problems;
}

std::optional<std::string> check_baseline_file(const std::string& path) {
  if (path.empty()) return std::nullopt;
  Baseline baseline;
  return load_baseline(path, baseline);
}

void apply_default_suppressions(Report& report) {
  Suppressions suppressions;
  parse_suppressions(default_suppressions_text(), "<built-in>", suppressions, all_rules());
  apply_suppressions(report, suppressions);
}

void post_process(Report& report, const PostProcessOptions& options,
                  const std::function<void(std::string_view)>& say) {
  if (options.default_suppressions) apply_default_suppressions(report);
  if (!options.suppressions.empty()) apply_suppressions_file(options.suppressions, report, say);
  settle_rehearsals(report);  // on what the suppressions left; a baseline hides, not refutes
  if (!options.baseline.empty()) apply_baseline_file(options.baseline, report, say);
}

}  // namespace capguard
