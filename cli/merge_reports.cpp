#include "cli/merge_reports.h"

#include <filesystem>

#include "cli/output.h"
#include "report/finding_groups.h"
#include "report/json_report.h"

namespace capguard::cli {

namespace fs = std::filesystem;

bool is_json_report_path(const std::string& path) {
  std::error_code error;
  return path.ends_with(".json") && !fs::is_directory(path, error);
}

std::vector<std::string> read_json_reports(const std::vector<std::string>& paths,
                                           std::vector<Report>& reports,
                                           std::set<std::string>& covered) {
  std::vector<std::string> problems;
  for (const std::string& path : paths) {
    const JsonParseResult parsed = parse_json_file(path);
    if (!parsed.value) {
      problems.push_back("cannot read report: " + parsed.error->to_string());
      continue;
    }
    Report report;
    if (auto why = report_from_json(*parsed.value, report)) {
      problems.push_back("cannot read report: " + path + ": " + *why);
      continue;
    }
    for (const ProcessInfo& process : report.processes)
      if (!process.trace_path.empty())
        covered.insert(fs::path(process.trace_path).filename().string());
    reports.push_back(std::move(report));
  }
  return problems;
}

bool gate_on_missing_ranks(Report& report, const std::string& fail_on) {
  const uint32_t world = world_size_of(report);
  if (world == 0) return false;
  std::vector<bool> seen(world, false);
  for (const ProcessInfo& p : report.processes)
    if (p.who && p.who->rank && *p.who->rank < world) seen[*p.who->rank] = true;
  std::vector<uint32_t> missing;
  for (uint32_t rank = 0; rank < world; ++rank)
    if (!seen[rank]) missing.push_back(rank);
  if (missing.empty()) return false;
  const std::string message =
      (missing.size() == 1 ? "rank " : "ranks ") + rank_list(missing) + " of " +
      std::to_string(world) +
      " never reported: no trace or report of theirs was read (the rank never started, "
      "capguard never reached it, or its trace or report is missing); what they did is unknown";
  if (fail_on == "never") {
    say("warning: " + message);
    return false;
  }
  const bool failing_anyway = has_findings_at(report, fail_on);
  report.problems.push_back({failing_anyway ? Severity::Warning : Severity::Error, message});
  return !failing_anyway;
}

}  // namespace capguard::cli
