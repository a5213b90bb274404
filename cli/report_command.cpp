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
  // What could be read is still reported; the bad traces are named after it.
  const bool nothing_read = analysis.report.processes.empty() && !problems.empty();
  const bool written = nothing_read || write_outputs(analysis.report, targets, options);
  for (const auto& problem : problems) std::fprintf(stderr, "capguard: %s\n", problem.c_str());
  if (!problems.empty()) return kExitCannotRead;
  if (!written) return kExitUsage;
  return has_findings_at(analysis.report, options.fail_on) ? kExitFindings : 0;
}

}  // namespace capguard::cli
