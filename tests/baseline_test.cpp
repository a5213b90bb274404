#include "report/baseline.h"
#include "tests/render_test_report.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "report/fingerprint.h"
#include "report/render.h"
#include "ci_gate_report.h"

namespace capguard {
namespace {

Baseline baseline_of(const std::string& text) {
  JsonParseResult parsed = parse_json(text, "old.json");
  REQUIRE_MESSAGE(!parsed.error, parsed.error->to_string());
  Baseline baseline;
  const auto error = baseline_from_json(*parsed.value, baseline);
  REQUIRE_MESSAGE(!error, *error);
  return baseline;
}

// The same findings as a later run would see them: other pids, addresses, threads, order.
Report rerun_of(Report report) {
  for (Finding& f : report.findings) {
    f.pid += 11;
    f.thread += 5;
    f.location.seq += 1000;
    for (Frame& frame : f.location.frames) frame.address += 0x10000;
    for (uint64_t& a : f.location.addresses) a += 0x10000;
  }
  return report;
}

}  // namespace

TEST_CASE("a baseline from the JSON report hides exactly the findings it already had") {
  const Report old_report = testing::ci_gate_report();
  const Baseline baseline = baseline_of(render_json(old_report));
  CHECK(baseline.fingerprints.size() == old_report.findings.size());

  Report now = rerun_of(old_report);
  Finding fresh = now.findings[0];
  fresh.location.frames[1].line = 53;  // a new sync one line further down
  now.findings.push_back(fresh);
  const BaselineStats stats = apply_baseline(now, baseline);
  // All but the finding in an unsymbolized module: a JSON report has no offsets to tell its
  // call from another there, so it stays (fails closed; a SARIF baseline hides it).
  CHECK(stats.known == old_report.findings.size() - 1);
  CHECK(stats.fresh == 2);
  CHECK(stats.unvouched == 1);
  CHECK(stats.gone == 0);
  REQUIRE(now.findings.size() == 2);
  CHECK(now.findings[0].rule == "capture-never-ended");  // in /opt/vendor/libkernels.so
  CHECK(now.findings[1].location.frames[1].line == 53);
  CHECK_FALSE(now.captures[0].root_cause.has_value());  // its root cause was in the baseline
}

TEST_CASE("a baseline from capguard's SARIF matches the same way") {
  const Report old_report = testing::ci_gate_report();
  const Baseline baseline = baseline_of(render_sarif(old_report, testing::with_rules()));
  CHECK(baseline.fingerprints.size() == old_report.findings.size());
  Report now = rerun_of(old_report);
  CHECK(apply_baseline(now, baseline).known == old_report.findings.size());
  CHECK(now.findings.empty());
}

TEST_CASE("findings fixed since the baseline are counted as gone") {
  const Baseline baseline = baseline_of(render_json(testing::ci_gate_report()));
  Report now = testing::ci_gate_report();
  now.findings.resize(2);
  now.captures[1].root_cause.reset();
  const BaselineStats stats = apply_baseline(now, baseline);
  CHECK(stats.known == 2);
  CHECK(stats.gone == testing::ci_gate_report().findings.size() - 2);
}

TEST_CASE("an empty baseline keeps every finding") {
  Report now = testing::ci_gate_report();
  const BaselineStats stats = apply_baseline(now, baseline_of("{\"findings\": []}"));
  CHECK(stats.fresh == now.findings.size());
  CHECK(now.findings.size() == testing::ci_gate_report().findings.size());
}

TEST_CASE("baselines that are not capguard reports are refused with a reason") {
  Baseline baseline;
  auto error = baseline_from_json(*parse_json("{\"results\": []}", "x").value, baseline);
  REQUIRE(error);
  CHECK(error->starts_with("not a capguard report"));
  error =
      baseline_from_json(*parse_json("{\"findings\": [{\"api\": \"x\"}]}", "x").value, baseline);
  REQUIRE(error);
  CHECK(*error == "finding #1 has no \"rule\"");
  error = baseline_from_json(
      *parse_json("{\"runs\": [{\"results\": [{\"ruleId\": \"x\"}]}]}", "x").value, baseline);
  REQUIRE(error);
  CHECK(error->find("partialFingerprints") != std::string::npos);
}

TEST_CASE("loading a baseline file reports where its JSON is broken") {
  const std::string path = "capguard_baseline_test_broken.json";
  std::ofstream(path) << "{\n  \"findings\": [\n    {\"rule\" \"x\"}\n  ]\n}\n";
  Baseline baseline;
  const auto error = load_baseline(path, baseline);
  std::remove(path.c_str());
  REQUIRE(error);
  CHECK(*error == path + ":3:13: expected ':' after object key");
  const auto missing = load_baseline("/nonexistent/old.json", baseline);
  REQUIRE(missing);
  // Why, in strerror's words (read_regular_file).
  CHECK(*missing == "/nonexistent/old.json: cannot open file: No such file or directory");
}

}  // namespace capguard
