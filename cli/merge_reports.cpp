#include "cli/merge_reports.h"

#include <filesystem>

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

}  // namespace capguard::cli
