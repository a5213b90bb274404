#include "report/suppressions.h"
#include "rules/rule_table.h"

#include <doctest/doctest.h>

#include <string>

#include "ci_gate_report.h"

namespace capguard {
namespace {

Suppressions parse_ok(std::string_view text) {
  Suppressions s;
  const auto errors = parse_suppressions(text, "ci.supp", s, all_rules());
  REQUIRE_MESSAGE(errors.empty(), errors.front().to_string());
  return s;
}

std::vector<std::string> rules_of(const Report& report) {
  std::vector<std::string> out;
  for (const Finding& f : report.findings) out.push_back(f.rule);
  return out;
}

}  // namespace

TEST_CASE("glob: '*' spans any run of characters, '?' one, everything else is literal") {
  CHECK(glob_match("*", ""));
  CHECK(glob_match("train_*", "train_step"));
  CHECK(glob_match("*::grow*", "(anonymous namespace)::grow(unsigned long)"));
  CHECK(glob_match("*/third_party/*", "/repo/third_party/x/y.cu"));
  CHECK(glob_match("f?o", "foo"));
  CHECK_FALSE(glob_match("f?o", "fo"));
  CHECK_FALSE(glob_match("train_*", "eval_step"));
  CHECK_FALSE(glob_match("a*b*c", "aXbXd"));
  CHECK(glob_match("a*b*c", "aXbXbXc"));
  CHECK_FALSE(glob_match("*.cu", "train.cuh"));
}

TEST_CASE("suppressions parse with comments, blank lines, spaces and C++ names") {
  const Suppressions s = parse_ok(
      "# known issues, tracked in #123\n"
      "\n"
      "  sync-during-capture : fun : train_step  \r\n"
      "*:src:*/third_party/*\n"
      "unjoined-fork:fun:ns::Pool::grow\n"
      "escaped-*:mod:libkernels.so\n");
  REQUIRE(s.entries.size() == 4);
  CHECK(s.entries[0].rule == "sync-during-capture");
  CHECK(s.entries[0].kind == SuppressionKind::Function);
  CHECK(s.entries[0].pattern == "train_step");
  CHECK(s.entries[0].line == 3);
  CHECK(s.entries[1].kind == SuppressionKind::Source);
  CHECK(s.entries[2].pattern == "ns::Pool::grow");
  CHECK(s.entries[3].kind == SuppressionKind::Module);
  CHECK(s.entries[3].text == "escaped-*:mod:libkernels.so");
}

TEST_CASE("malformed suppression lines are reported with file and line, all of them") {
  Suppressions s;
  const auto errors = parse_suppressions(
      "sync-during-capture:fun:ok\n"
      "sync-during-capture\n"
      "sync-durng-capture:fun:x\n"
      "*:func:x\n"
      "*:src:\n"
      ":fun:x\n",
      "ci.supp", s, all_rules());
  REQUIRE(errors.size() == 5);
  CHECK(errors[0].to_string().starts_with("ci.supp:2: expected RULE:KIND:PATTERN"));
  CHECK(errors[1].to_string() ==
        "ci.supp:3: unknown rule 'sync-durng-capture' ('capguard rules' lists them)");
  CHECK(errors[2].to_string() == "ci.supp:4: unknown kind 'func': expected fun, src or mod");
  CHECK(errors[3].to_string() == "ci.supp:5: empty pattern after 'src:'");
  CHECK(errors[4].to_string().starts_with("ci.supp:6: missing rule id"));
  CHECK(s.entries.size() == 1);  // the good line still counts
}

TEST_CASE("a missing suppressions file is an error naming it") {
  Suppressions s;
  const auto errors = load_suppressions("/nonexistent/ci.supp", s, all_rules());
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].to_string() ==
        "/nonexistent/ci.supp: cannot open suppressions file: No such file or directory");
}

TEST_CASE("fun: matches any frame of the culprit's stack, with or without parameters") {
  const Report report = testing::ci_gate_report();
  const Finding& sync = report.findings[0];
  CHECK(suppression_matches(parse_ok("sync-during-capture:fun:train_step").entries[0], sync));
  CHECK(suppression_matches(parse_ok("*:fun:train_step(float*, CUstream_st*)").entries[0], sync));
  CHECK(suppression_matches(parse_ok("*:fun:main").entries[0], sync));  // an outer frame
  CHECK_FALSE(suppression_matches(parse_ok("*:fun:train").entries[0], sync));
  CHECK_FALSE(suppression_matches(parse_ok("unjoined-fork:fun:train_step").entries[0], sync));
  const Finding& relaxed = report.findings[3];
  CHECK(suppression_matches(parse_ok("*:fun:(anonymous namespace)::grow").entries[0], relaxed));
}

TEST_CASE("src: and mod: match base names, or whole paths when the pattern has a '/'") {
  const Report report = testing::ci_gate_report();
  const Finding& escape = report.findings[2];
  CHECK(suppression_matches(parse_ok("*:src:copy.h").entries[0], escape));
  CHECK(suppression_matches(parse_ok("*:src:/usr/include/*").entries[0], escape));
  CHECK_FALSE(suppression_matches(parse_ok("*:src:include/*").entries[0], escape));
  CHECK_FALSE(suppression_matches(parse_ok("*:src:copy").entries[0], escape));
  CHECK(suppression_matches(parse_ok("*:mod:libcuda.so*").entries[0], escape));
  CHECK(suppression_matches(parse_ok("*:mod:libkernels.so").entries[0], report.findings[4]));
  const Finding& stackless = report.findings[5];
  CHECK_FALSE(suppression_matches(parse_ok("*:src:*.cu").entries[0], stackless));
}

TEST_CASE("a bare '*' pattern suppresses a rule everywhere, even findings without a stack") {
  const Finding stackless = testing::ci_gate_report().findings[5];
  CHECK(suppression_matches(parse_ok("capture-invalidated:fun:*").entries[0], stackless));
  CHECK(suppression_matches(parse_ok("*:mod:*").entries[0], stackless));
  CHECK_FALSE(suppression_matches(parse_ok("sync-during-capture:fun:*").entries[0], stackless));
}

TEST_CASE("applying suppressions removes findings, counts each once, and lists unused ones") {
  Report report = testing::ci_gate_report();
  const Suppressions s = parse_ok(
      "unjoined-fork:src:train.cu\n"
      "*:src:train.cu\n"  // would also match unjoined-fork: counted for the first only
      "*:mod:libkernels.so\n"
      "captured-event-query:fun:*\n");
  const SuppressionStats stats = apply_suppressions(report, s);
  CHECK(stats.matched == std::vector<size_t>{1, 1, 1, 0});
  CHECK(stats.removed == 3);
  CHECK(rules_of(report) == std::vector<std::string>{"escaped-sync-copy",
                                                     "relaxed-mode-unsafe-call",
                                                     "capture-invalidated"});
  const std::string text = describe_suppression_stats(s, stats);
  CHECK(text.find("ci.supp:1: suppression 'unjoined-fork:src:train.cu' matched 1 finding\n") !=
        std::string::npos);
  CHECK(text.find("ci.supp:4: unused suppression 'captured-event-query:fun:*' matched no "
                  "finding\n") != std::string::npos);
}

TEST_CASE(
    "suppressing a capture's root cause clears it; other captures' indexes follow the shift") {
  Report report = testing::ci_gate_report();
  report.captures[1].root_cause = 2;  // pretend the escape broke capture 2
  apply_suppressions(report, parse_ok("sync-during-capture:fun:*\n"));
  CHECK_FALSE(report.captures[0].root_cause.has_value());
  REQUIRE(report.captures[1].root_cause.has_value());
  CHECK(*report.captures[1].root_cause == 1);
  CHECK(report.findings[*report.captures[1].root_cause].rule == "escaped-sync-copy");
}

TEST_CASE("no suppressions leave the report untouched") {
  Report report = testing::ci_gate_report();
  const SuppressionStats stats = apply_suppressions(report, Suppressions{});
  CHECK(stats.removed == 0);
  CHECK(report.findings.size() == testing::ci_gate_report().findings.size());
  CHECK(report.captures[0].root_cause == std::optional<size_t>(0));
}

}  // namespace capguard
