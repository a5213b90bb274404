// capguard report TRACE_OR_DIR...: re-analyzes recorded traces, e.g. on a machine without a GPU.
#include <iterator>
#include <set>

#include "cli/commands.h"
#include "cli/merge_reports.h"
#include "cli/output.h"
#include "cli/trace_ending.h"
#include "engine/post_process.h"
#include "model/enum_names.h"
#include "model/report_merge.h"
#include "report/finding_filter.h"
#include "report/finding_groups.h"
#include "rules/rank_collective_mismatch.h"

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
  // Per node, then merge: JSON reports first, so that the traces they judged are
  // not read again.
  std::vector<std::string> json_paths, trace_paths;
  for (const std::string& path : paths)
    (is_json_report_path(path) ? json_paths : trace_paths).push_back(path);
  std::vector<Report> node_reports;
  std::vector<std::string> node_sources;
  CoveredTraces covered;
  std::vector<std::string> problems =
      read_json_reports(json_paths, node_reports, node_sources, covered);
  Analysis analysis;
  GateInput gate;
  gate.unreadable = std::move(problems);
  // With node reports, the suppressions file and the baseline are applied once, to the merged
  // findings (the nodes' findings went past both); the built-in suppressions each
  // node applied already.
  ReportOptions trace_options = options;
  if (!node_reports.empty()) trace_options.suppressions.clear(), trace_options.baseline.clear();
  if (!trace_paths.empty())
    for (auto& problem : analyze_traces(trace_paths, trace_options, analysis, false, covered))
      gate.unreadable.push_back(std::move(problem));
  gate.traces = scan_trace_facts(analysis.report);  // the traces read here, not the nodes'
  gate.incomplete = analysis.incomplete;
  // The nodes' reports carry their own gates' problems: a merged report fails where one did.
  const std::string fail_on = options.fail_on ? to_string(*options.fail_on) : "never";
  uint32_t last_capture = last_capture_id(analysis.report);
  std::vector<std::string> judged;  // the gate each node report was judged with
  for (Report& node : node_reports) {
    judged.push_back(node.judged_fail_on);
    // The nodes' coverage verdicts give way to this gate's, judged on the merged counts.
    std::erase_if(node.problems, [](const ToolProblem& p) { return p.coverage_gate; });
    std::move(node.problems.begin(), node.problems.end(), std::back_inserter(gate.node_problems));
    node.problems.clear();
    append_report(analysis.report, std::move(node), &last_capture);
  }
  if (!node_reports.empty()) {
    // Each node judged its own ranks against each other; the job's are all here now.
    std::vector<bool> node_judged(analysis.report.findings.size());
    for (size_t i = 0; i < node_judged.size(); ++i)
      node_judged[i] = rules::judged_across_ranks(analysis.report.findings[i].rule);
    erase_findings(analysis.report, node_judged);
    rules::find_rank_collective_mismatches(analysis.report);
    gate.cannot_vouch = merge_doubts(judged, node_sources, fail_on, analysis.report);
    PostProcessOptions post;
    post.default_suppressions = false;
    post.suppressions = options.suppressions;
    post.baseline = options.baseline;
    post_process(analysis.report, post, [](std::string_view line) { say(line); });
  }
  gate.findings = &analysis.report.findings;  // every node's: one gate for the job
  if (!options.one_node) {  // --one-node: the ranks on other nodes are the merge's to count
    gate.world_size = world_size_of(analysis.report);
    gate.missing_ranks = missing_ranks(analysis.report);
  }
  GateOptions gate_options;
  gate_options.fail_on = options.fail_on;
  // report has no --require-attach: without a gate (--fail-on never) nothing fails closed but an
  // unreadable trace (docs/security.md).
  gate_options.require_attach = options.fail_on.has_value();
  gate_options.tolerated_by = "--fail-on never";
  gate_options.min_graph_coverage = options.min_graph_coverage;
  gate.coverage = &analysis.report.coverage;
  gate.processes = &analysis.report.processes;
  const GateResult verdict = judge_gate(gate, gate_options);
  analysis.report.judged_fail_on = fail_on;  // a merge of this report checks it
  for (const ToolProblem& reason : verdict.reasons) analysis.report.problems.push_back(reason);
  // Every requested report is written, even when nothing could be read (it then says why).
  return status_after_writing(verdict, write_report(analysis.report, targets, options));
}

}  // namespace capguard::cli
