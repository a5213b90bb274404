// capguard report TRACE_OR_DIR...: re-analyzes recorded traces, e.g. on a machine without a GPU.
#include <cstdio>
#include <set>

#include "cli/commands.h"
#include "cli/merge_reports.h"
#include "cli/output.h"
#include "cli/trace_ending.h"
#include "model/report_merge.h"

namespace capguard::cli {
namespace {

// The gate fails closed (docs/security.md): a trace that says capguard never attached, or a
// process whose trace has no end record, can hide findings, so a report that would pass exits
// 3 instead. Without an end record the process was killed, crashed, is still running, or the
// trace was cut; when the findings already fail the gate (exit 1, e.g. a program that aborts
// right after its mistake) that stays the exit status and the missing end is a warning. With
// --fail-on never there is no gate: both are said on stderr only. True when the gate fails.
bool gate_on_trace_endings(Report& report, const std::string& fail_on) {
  const bool gate = fail_on != "never";
  const bool failing_anyway = has_findings_at(report, fail_on);
  bool failed = false;
  for (const ProcessInfo& process : report.processes) {
    if (process.trace_path.empty()) continue;
    const TraceEnding ending = scan_trace_ending(process.trace_path);
    if (!ending.readable) continue;  // already a problem of its own
    const std::string who = "process " + std::to_string(process.pid) + " (" + process.command +
                            ", " + process.trace_path + ")";
    std::vector<ToolProblem> found;
    if (ending.attach_failed || (!process.attached && !process.attach_message.empty()))
      found.push_back({Severity::Error, "capguard did not attach to " + who +
                                            (process.attached || process.attach_message.empty()
                                                 ? std::string(" (an 'i failed' record)")
                                                 : ": " + process.attach_message)});
    // issue 35 (gate): a trace without any 'i' record never says capguard attached: closed.
    else if (!ending.has_attach)
      found.push_back({Severity::Error,
                       "capguard never attached to " + who + " (its trace has no attach record)"});
    if (!ending.has_end)
      found.push_back({failing_anyway ? Severity::Warning : Severity::Error,
                       "the trace of " + who +
                           " has no end record: the process was killed, crashed or is still "
                           "running, or the trace was cut; what it did after its last record "
                           "is unknown"});
    for (ToolProblem& problem : found) {
      if (!gate) {
        say("warning: " + problem.message);
        continue;
      }
      failed |= problem.level == Severity::Error;
      report.problems.push_back(std::move(problem));
    }
  }
  return failed;
}

// An analysis that degraded past a memory budget (Analysis::incomplete, docs/security.md) fails
// closed the same way: exit 3 unless findings already fail the gate (then a warning).
bool gate_on_incomplete(Report& report, const std::vector<std::string>& incomplete,
                        const std::string& fail_on) {
  const bool failing_anyway = has_findings_at(report, fail_on);
  bool failed = false;
  for (const std::string& message : incomplete) {
    if (fail_on == "never") {
      say("warning: " + message);
      continue;
    }
    failed |= !failing_anyway;
    report.problems.push_back({failing_anyway ? Severity::Warning : Severity::Error, message});
  }
  return failed;
}

}  // namespace

int report_command(const std::vector<std::string>& paths, const ReportOptions& options) {
  std::vector<OutputTarget> targets;
  if (auto message = resolve_outputs(options, targets)) {
    say(*message);
    return kExitUsage;
  }
  if (auto message = check_outputs_not_inputs(targets, paths)) {
    say(*message);
    return kExitUsage;
  }
  if (auto message = check_post_process_files(options)) {
    say(*message);
    return kExitUsage;
  }
  // Per node, then merge (issue 33): JSON reports first, so that the traces they judged are
  // not read again.
  std::vector<std::string> json_paths, trace_paths;
  for (const std::string& path : paths)
    (is_json_report_path(path) ? json_paths : trace_paths).push_back(path);
  std::vector<Report> node_reports;
  std::set<std::string> covered;
  std::vector<std::string> problems = read_json_reports(json_paths, node_reports, covered);
  Analysis analysis;
  if (!trace_paths.empty())
    for (auto& problem : analyze_traces(trace_paths, options, analysis, false, covered))
      problems.push_back(std::move(problem));
  for (const auto& problem : problems)
    analysis.report.problems.push_back({Severity::Error, problem});
  bool gate_failed = gate_on_trace_endings(analysis.report, options.fail_on);
  gate_failed |= gate_on_incomplete(analysis.report, analysis.incomplete, options.fail_on);
  // The nodes' reports carry their own gates' problems: a merged report fails where one did.
  for (Report& node : node_reports) {
    for (const ToolProblem& problem : node.problems)
      gate_failed |= problem.level == Severity::Error && options.fail_on != "never";
    append_report(analysis.report, std::move(node));
  }
  if (!options.one_node) gate_failed |= gate_on_missing_ranks(analysis.report, options.fail_on);
  // Every requested report is written, even when nothing could be read (it then says why).
  const bool written = write_report(analysis.report, targets, options);
  if (!problems.empty() || gate_failed) return kExitCannotRead;
  if (!written) return kExitUsage;
  return has_findings_at(analysis.report, options.fail_on) ? kExitFindings : 0;
}

}  // namespace capguard::cli
