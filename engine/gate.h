// The gate: the exit status of `run` and `report` (docs/command-line.md, "Exit status";
// docs/security.md, "Pass a gate by accident"), decided here and nowhere else, from what the
// analysis found and what the traces say about themselves. Pure: no file is read here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/report.h"
#include "report/finding_groups.h"

namespace capguard {

inline constexpr int kExitFindings = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitCannotRead = 3;  // report: unreadable trace; run: could not attach

struct GateOptions {
  std::optional<Severity> fail_on = Severity::Error;  // nullopt: --fail-on never
  // A process capguard did not attach to fails closed (run: --require-attach; report: unless
  // --fail-on never); otherwise it is a warning saying what tolerated it.
  bool require_attach = true;
  std::string_view tolerated_by = "--no-require-attach";
  int findings_status = kExitFindings;  // run: --error-exitcode
  // --min-graph-coverage PCT: the share of kernels run inside graph replays after warm-up that
  // every process must reach (unset: coverage does not gate).
  std::optional<double> min_graph_coverage;
};

// What one traced process's trace says beyond its findings.
struct TraceFacts {
  std::string who;                // "process 12 (./app, /tmp/t/capguard.12.trace)"
  bool attach_failed = false;     // an 'i failed' record, or the process says it was not attached
  std::string attach_message;     // why, when the trace says
  bool has_attach = true;         // any 'i' record: none, and capguard never attached
  bool has_end = true;            // its end record ('z')
  int still_running_after_s = 0;  // run: still running this long after the program exited
};

struct GateInput {
  const std::vector<Finding>* findings = nullptr;
  std::vector<std::string> unreadable;  // traces that could not be read (in full): always exit 3
  std::vector<TraceFacts> traces;
  // Analysis::incomplete: memory budgets, lost CUPTI subscriptions, never-executed rehearsals.
  std::vector<std::string> incomplete;
  std::string nothing_attached;  // run: why no process was watched at all; empty otherwise
  int program_status = 0;        // run: the program's own exit status
  // report of the nodes' JSON reports: the problems their own gates gave, kept as
  // they were; an error among them fails this gate closed too (unless --fail-on never).
  std::vector<ToolProblem> node_problems;
  // report: the job's size as its processes name it (WORLD_SIZE or the like), and
  // its ranks that no trace or report names; they fail closed like a trace without its end.
  // Empty under report --one-node (the merge counts them) and for run.
  uint32_t world_size = 0;
  std::vector<RankRun> missing_ranks;
  // report: what a merge cannot vouch for (a node report judged with another gate,
  // ranks two hosts claim, one process in two inputs): fails closed unless --fail-on never.
  std::vector<std::string> cannot_vouch;
  // Graph coverage after warm-up, per process (Report::coverage): judged by min_graph_coverage.
  const std::vector<CoverageInfo>* coverage = nullptr;
  std::vector<ProcessInfo> const* processes = nullptr;  // to name a process in a reason
};

struct GateResult {
  int status = 0;
  // Why, one line each, for report.problems (Error: the gate failed closed because of it).
  std::vector<ToolProblem> reasons;
};

// Whether a finding reaches --fail-on.
bool reaches_fail_on(const std::vector<Finding>& findings, std::optional<Severity> fail_on);

GateResult judge_gate(const GateInput& input, const GateOptions& options);

// After the reports were written: one that could not be is exit 2, unless the gate failed closed.
inline int status_after_writing(const GateResult& gate, bool written) {
  return gate.status == kExitCannotRead || written ? gate.status : kExitUsage;
}

}  // namespace capguard
