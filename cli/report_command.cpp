// capguard report TRACE_OR_DIR...: re-analyzes recorded traces, e.g. on a machine without a GPU.
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/trace_ending.h"

namespace capguard::cli {

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
  Analysis analysis;
  GateInput gate;
  gate.unreadable = analyze_traces(paths, options, analysis);
  gate.findings = &analysis.report.findings;
  gate.traces = scan_trace_facts(analysis.report);
  gate.incomplete = analysis.incomplete;
  GateOptions gate_options;
  gate_options.fail_on = options.fail_on;
  // report has no --require-attach: without a gate (--fail-on never) nothing fails closed but an
  // unreadable trace (docs/security.md).
  gate_options.require_attach = options.fail_on.has_value();
  gate_options.tolerated_by = "--fail-on never";
  const GateResult verdict = judge_gate(gate, gate_options);
  for (const ToolProblem& reason : verdict.reasons) analysis.report.problems.push_back(reason);
  // Every requested report is written, even when nothing could be read (it then says why).
  return status_after_writing(verdict, write_report(analysis.report, targets, options));
}

}  // namespace capguard::cli
