// capguard report TRACE_OR_DIR...: re-analyzes recorded traces, e.g. on a machine without a GPU.
#include <cstdio>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/suppress.h"

namespace capguard::cli {

int report_command(const std::vector<std::string>& paths, const ReportOptions& options) {
  std::vector<OutputTarget> targets;
  if (auto message = resolve_outputs(options, targets)) {
    std::fprintf(stderr, "capguard: %s\n", message->c_str());
    return kExitUsage;
  }
  if (auto message = check_baseline_file(options.baseline)) {
    std::fprintf(stderr, "capguard: %s\n", message->c_str());
    return kExitUsage;
  }
  if (auto message = check_suppressions_file(options.suppressions)) {
    std::fprintf(stderr, "capguard: %s\n", message->c_str());
    return kExitUsage;
  }
  Analysis analysis;
  const std::vector<std::string> problems = analyze_traces(paths, options, analysis);
  for (const auto& problem : problems)
    analysis.report.problems.push_back({Severity::Error, problem});
  // Every requested report is written, even when nothing could be read (it then says why).
  const bool written = write_report(analysis.report, targets, options);
  if (!problems.empty()) return kExitCannotRead;
  if (!written) return kExitUsage;
  return has_findings_at(analysis.report, options.fail_on) ? kExitFindings : 0;
}

}  // namespace capguard::cli
