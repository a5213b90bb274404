#include "engine/gate.h"

#include <algorithm>
#include <cstdio>

#include "model/graph_coverage.h"
#include "report/finding_groups.h"

namespace capguard {

bool reaches_fail_on(const std::vector<Finding>& findings, std::optional<Severity> fail_on) {
  return fail_on && std::any_of(findings.begin(), findings.end(),
                                [&](const Finding& f) { return f.severity >= *fail_on; });
}

namespace {

std::string percent(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", value);
  return text;
}

std::string process_words(const GateInput& input, const CoverageInfo& coverage) {
  std::string words = "process " + std::to_string(coverage.pid);
  if (input.processes != nullptr && coverage.process >= 1 &&
      coverage.process <= input.processes->size()) {
    const ProcessInfo& p = (*input.processes)[coverage.process - 1];
    if (p.who && !who_label(*p.who).empty()) words += ", " + who_label(*p.who);
    if (!p.command.empty()) words += " (" + p.command.substr(0, 80) + ")";
  }
  return words;
}

// --min-graph-coverage: the job's share (every process's kernels counted together: one process
// alone is its own) must reach it; a process whose eager launches were not counted, or none that
// replayed a graph, cannot show it and fails too. Each reason is marked as the coverage gate's:
// a merge of node reports judges the merged counts again instead of keeping the nodes' verdicts.
bool coverage_fails(const GateInput& input, double minimum, std::vector<ToolProblem>& reasons) {
  const std::string option = "--min-graph-coverage " + percent(minimum);
  static const std::vector<CoverageInfo> kNone;
  const std::vector<CoverageInfo>& all = input.coverage ? *input.coverage : kNone;
  bool fails = false;
  const auto fail = [&](std::string message) {
    reasons.push_back({Severity::Error, std::move(message)});
    reasons.back().coverage_gate = true;
    fails = true;
  };
  std::vector<CoverageInfo> measured;
  const CoverageInfo* lowest = nullptr;
  for (const CoverageInfo& coverage : all) {
    if (!coverage.measured) {
      fail("graph coverage of " + process_words(input, coverage) +
           " is unknown: its eager launches bypassed capguard's launch hooks (" + option + ")");
      continue;
    }
    measured.push_back(coverage);
    if (lowest == nullptr || coverage.share() < lowest->share()) lowest = &coverage;
  }
  if (all.empty())
    fail(
        "no process replayed a CUDA graph (or the traces predate trace format 9): graph "
        "coverage cannot be shown (" +
        option + ")");
  const CoverageInfo job = job_coverage(measured);
  if (!measured.empty() && job.share() < minimum) {
    std::string where = " in " + process_words(input, *lowest);
    if (measured.size() > 1)
      where =
          " in the job's " + std::to_string(measured.size()) +
          " processes, their kernels counted together (the lowest: " + percent(lowest->share()) +
          where + ")";
    fail("graph coverage after warm-up is " + percent(job.share()) + where + ", below " + option +
         ": " + std::to_string(job.eager_kernels) + " of " +
         std::to_string(std::max(job.eager_kernels, job.eager_kernels + job.graph_kernels)) +
         " kernels ran outside graph replays");
  }
  return fails;
}

}  // namespace

GateResult judge_gate(const GateInput& input, const GateOptions& options) {
  static const std::vector<Finding> kNone;
  GateResult result;
  const bool coverage_failing = options.min_graph_coverage &&
                                coverage_fails(input, *options.min_graph_coverage, result.reasons);
  const bool failing = reaches_fail_on(input.findings ? *input.findings : kNone, options.fail_on) ||
                       coverage_failing;
  bool closed = false;
  const auto fail_closed = [&](std::string message) {
    closed = true;
    result.reasons.push_back({Severity::Error, std::move(message)});
  };
  for (const std::string& message : input.unreadable) fail_closed(message);
  // Not watched: what findings say cannot be trusted, whatever they are.
  const auto not_attached = [&](std::string message) {
    if (options.require_attach)
      fail_closed(std::move(message));
    else
      result.reasons.push_back(
          {Severity::Warning, message + " (" + std::string(options.tolerated_by) + ")"});
  };
  // Watched in part: fails closed unless findings fail the gate anyway (a program that aborts
  // right after its mistake); without a gate (--fail-on never) a warning in the report.
  const auto unfinished = [&](std::string message) {
    if (options.fail_on && !failing)
      fail_closed(std::move(message));
    else
      result.reasons.push_back({Severity::Warning, std::move(message)});
    result.reasons.back().unfinished = true;  // a merge judges it again
  };
  for (const TraceFacts& trace : input.traces) {
    if (trace.attach_failed)
      not_attached("cannot attach to " + trace.who +
                   (trace.attach_message.empty() ? std::string(" (an 'i failed' record)")
                                                 : ": " + trace.attach_message));
    else if (!trace.has_attach)
      not_attached("capguard never attached to " + trace.who + " (its trace has no attach record)");
    if (trace.still_running_after_s > 0)
      unfinished(trace.who + " was still running " + std::to_string(trace.still_running_after_s) +
                 " s after the program exited: what it did after its last record is not "
                 "analyzed");
    else if (!trace.has_end)
      unfinished("the trace of " + trace.who +
                 " has no end record: the process was killed, crashed or is still running, or "
                 "the trace was cut; what it did after its last record is unknown");
  }
  for (const std::string& message : input.incomplete) unfinished(message);
  if (!input.nothing_attached.empty()) not_attached(input.nothing_attached);
  for (const ToolProblem& problem : input.node_problems) {
    // Judged again against this gate's findings: a node's findings that failed its gate may be
    // a baseline's or a suppression's here.
    if (problem.unfinished) {
      unfinished(problem.message);
      continue;
    }
    closed |= problem.level == Severity::Error && options.fail_on.has_value();
    result.reasons.push_back(problem);
  }
  for (const std::string& message : input.cannot_vouch) {
    if (options.fail_on)
      fail_closed(message);
    else
      result.reasons.push_back({Severity::Warning, message + " (--fail-on never)"});
  }
  if (!input.missing_ranks.empty())
    unfinished((rank_count(input.missing_ranks) == 1 ? "rank " : "ranks ") +
               rank_runs_list(input.missing_ranks) + " of " + std::to_string(input.world_size) +
               " never reported: no trace or report of theirs was read (the rank never started, "
               "capguard never reached it, or its trace or report is missing); what they did is "
               "unknown");

  result.status = closed    ? kExitCannotRead
                  : failing ? options.findings_status
                            : input.program_status;
  return result;
}

}  // namespace capguard
