// The gate (engine/gate.h): every combination of what it weighs, against tables written out by
// hand -- the exit status, and for each reason whether it failed the gate closed.
#include "engine/gate.h"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

using namespace capguard;

namespace {

std::vector<Finding> findings_at(std::optional<Severity> level) {
  std::vector<Finding> findings;
  if (level) {
    findings.emplace_back();
    findings.back().severity = *level;
  }
  return findings;
}

}  // namespace

TEST_CASE("gate: --fail-on against the highest finding") {
  // rows: fail_on; columns: no finding, note, warning, error -> reached?
  struct Row {
    std::optional<Severity> fail_on;
    bool reached[4];
  };
  const Row rows[] = {
      {Severity::Note, {false, true, true, true}},
      {Severity::Warning, {false, false, true, true}},
      {Severity::Error, {false, false, false, true}},
      {std::nullopt, {false, false, false, false}},
  };
  const std::optional<Severity> levels[] = {std::nullopt, Severity::Note, Severity::Warning,
                                            Severity::Error};
  for (const Row& row : rows)
    for (size_t i = 0; i < 4; ++i) {
      CAPTURE(i);
      const std::vector<Finding> findings = findings_at(levels[i]);
      CHECK(reaches_fail_on(findings, row.fail_on) == row.reached[i]);
      GateInput input;
      input.findings = &findings;
      input.program_status = 7;
      GateOptions options;
      options.fail_on = row.fail_on;
      options.findings_status = 9;
      const GateResult result = judge_gate(input, options);
      CHECK(result.status == (row.reached[i] ? 9 : 7));
      CHECK(result.reasons.empty());
    }
}

// What can make a report untrustworthy, one at a time.
enum class Doubt {
  Unreadable,
  AttachFailed,
  NoEnd,
  StillRunning,
  Incomplete,
  NothingAttached,
  NodeFailed,   // report of JSON reports: a node's own gate failed closed
  MissingRanks  // report: ranks of the job that no trace or report names
};

GateInput input_with(Doubt doubt, const std::vector<Finding>& findings) {
  GateInput input;
  input.findings = &findings;
  input.program_status = 7;
  TraceFacts trace;
  trace.who = "process 5 (./app, t.trace)";
  switch (doubt) {
    case Doubt::Unreadable:
      input.unreadable.push_back("cannot open trace: t.trace");
      break;
    case Doubt::AttachFailed:
      trace.attach_failed = true, trace.attach_message = "no CUPTI";
      break;
    case Doubt::NoEnd:
      trace.has_end = false;
      break;
    case Doubt::StillRunning:
      trace.has_end = false, trace.still_running_after_s = 5;
      break;
    case Doubt::Incomplete:
      input.incomplete.push_back("a capture outgrew its budget");
      break;
    case Doubt::NothingAttached:
      input.nothing_attached = "cannot attach: no CUDA driver";
      break;
    case Doubt::NodeFailed:
      input.node_problems.push_back({Severity::Error, "cannot read trace: t.trace"});
      break;
    case Doubt::MissingRanks:
      input.world_size = 16, input.missing_ranks = {{3, 3}, {12, 12}};
      break;
  }
  input.traces.push_back(trace);
  return input;
}

TEST_CASE(
    "gate: each doubt, with and without a gate, findings failing it or not, attach "
    "required or not") {
  // Expected: status (program 7, findings 1), and the reason's level (Error: failed closed).
  struct Expect {
    int status;
    Severity level;
  };
  struct Row {
    Doubt doubt;
    // [fail_on error: no finding | an error finding] [fail_on never: no finding | an error]
    // for require_attach on, then off.
    Expect on[4];
    Expect off[4];
  };
  constexpr Severity E = Severity::Error, W = Severity::Warning;
  const Row rows[] = {
      // An unreadable trace: exit 3, always.
      {Doubt::Unreadable, {{3, E}, {3, E}, {3, E}, {3, E}}, {{3, E}, {3, E}, {3, E}, {3, E}}},
      // Not attached: exit 3 when attaching is required, findings or not; else a warning.
      {Doubt::AttachFailed, {{3, E}, {3, E}, {3, E}, {3, E}}, {{7, W}, {1, W}, {7, W}, {7, W}}},
      {Doubt::NothingAttached, {{3, E}, {3, E}, {3, E}, {3, E}}, {{7, W}, {1, W}, {7, W}, {7, W}}},
      // Watched in part: exit 3 unless findings fail the gate anyway; no gate: a warning.
      {Doubt::NoEnd, {{3, E}, {1, W}, {7, W}, {7, W}}, {{3, E}, {1, W}, {7, W}, {7, W}}},
      {Doubt::StillRunning, {{3, E}, {1, W}, {7, W}, {7, W}}, {{3, E}, {1, W}, {7, W}, {7, W}}},
      {Doubt::Incomplete, {{3, E}, {1, W}, {7, W}, {7, W}}, {{3, E}, {1, W}, {7, W}, {7, W}}},
      {Doubt::MissingRanks, {{3, E}, {1, W}, {7, W}, {7, W}}, {{3, E}, {1, W}, {7, W}, {7, W}}},
      // A node's own gate failed closed: so does the merge's, findings or not; its problem
      // keeps its level, also without a gate.
      {Doubt::NodeFailed, {{3, E}, {3, E}, {7, E}, {7, E}}, {{3, E}, {3, E}, {7, E}, {7, E}}},
  };
  for (const Row& row : rows)
    for (bool require_attach : {true, false})
      for (size_t column = 0; column < 4; ++column) {
        CAPTURE(static_cast<int>(row.doubt));
        CAPTURE(require_attach);
        CAPTURE(column);
        const std::vector<Finding> findings =
            findings_at(column % 2 ? std::optional(Severity::Error) : std::nullopt);
        GateOptions options;
        options.fail_on = column < 2 ? std::optional(Severity::Error) : std::nullopt;
        options.require_attach = require_attach;
        const GateResult result = judge_gate(input_with(row.doubt, findings), options);
        const Expect& expect = (require_attach ? row.on : row.off)[column];
        CHECK(result.status == expect.status);
        REQUIRE(result.reasons.size() == 1);  // in the report whatever the gate: never dropped
        CHECK(result.reasons[0].level == expect.level);
      }
}

TEST_CASE("gate: the reasons' words name the process and what tolerated a failure") {
  const std::vector<Finding> none;
  GateOptions options;
  options.require_attach = false;
  options.tolerated_by = "--fail-on never";
  GateResult result = judge_gate(input_with(Doubt::AttachFailed, none), options);
  REQUIRE(result.reasons.size() == 1);
  CHECK(result.reasons[0].message ==
        "cannot attach to process 5 (./app, t.trace): no CUPTI (--fail-on never)");
  result = judge_gate(input_with(Doubt::StillRunning, none), GateOptions{});
  REQUIRE(result.reasons.size() == 1);
  CHECK(result.reasons[0].message.starts_with("process 5 (./app, t.trace) was still running 5 s"));
  result = judge_gate(input_with(Doubt::NoEnd, none), GateOptions{});
  CHECK(
      result.reasons[0].message.starts_with("the trace of process 5 (./app, t.trace) has no end"));
  result = judge_gate(input_with(Doubt::MissingRanks, none), GateOptions{});
  REQUIRE(result.reasons.size() == 1);
  CHECK(result.reasons[0].message.starts_with("ranks 3, 12 of 16 never reported: "));
}

TEST_CASE("gate: every doubt at once is every reason, in order, and exit 3") {
  const std::vector<Finding> findings = findings_at(Severity::Warning);
  GateInput input;
  input.findings = &findings;
  input.unreadable = {"u"};
  input.traces.resize(2);
  input.traces[0].who = "a", input.traces[0].attach_failed = true;
  input.traces[1].who = "b", input.traces[1].has_end = false;
  input.incomplete = {"i"};
  input.nothing_attached = "n";
  input.node_problems = {{Severity::Warning, "o"}};
  input.world_size = 2, input.missing_ranks = {{1, 1}};
  const GateResult result = judge_gate(input, GateOptions{});
  CHECK(result.status == kExitCannotRead);
  std::vector<std::string> said;
  for (const ToolProblem& reason : result.reasons) said.push_back(reason.message.substr(0, 1));
  CHECK(said == std::vector<std::string>{"u", "c", "t", "i", "n", "o", "r"});
}

TEST_CASE("gate: a report that could not be written is exit 2 unless the gate failed closed") {
  const auto with = [](int status) {
    GateResult result;
    result.status = status;
    return result;
  };
  CHECK(status_after_writing(with(0), false) == kExitUsage);
  CHECK(status_after_writing(with(1), false) == kExitUsage);
  CHECK(status_after_writing(with(3), false) == kExitCannotRead);
  CHECK(status_after_writing(with(1), true) == 1);
  CHECK(status_after_writing(with(0), true) == 0);
}
