#include <doctest/doctest.h>

#include <string>

#include "report/fingerprint.h"
#include "report/json_reader.h"
#include "report/render.h"
#include "ci_gate_report.h"
#include "rules/rule_table.h"

namespace capguard {
namespace {

JsonValue parse_sarif(const Report& report, const std::string& source_root = testing::kSourceRoot) {
  RenderOptions options;
  options.rules = all_rules();
  options.source_root = source_root;
  JsonParseResult parsed = parse_json(render_sarif(report, options), "sarif");
  REQUIRE_MESSAGE(!parsed.error, parsed.error->to_string());
  return std::move(*parsed.value);
}

const JsonValue& at(const JsonValue& v, size_t i) {
  REQUIRE(v.as_array());
  REQUIRE(i < v.as_array()->size());
  return (*v.as_array())[i];
}

const JsonValue& member(const JsonValue& v, std::string_view key) {
  const JsonValue* m = v.get(key);
  REQUIRE_MESSAGE(m, "missing member ", std::string(key));
  return *m;
}

const JsonValue& result(const JsonValue& sarif, size_t i) {
  return at(member(at(member(sarif, "runs"), 0), "results"), i);
}

const JsonValue& artifact(const JsonValue& location) {
  return member(member(location, "physicalLocation"), "artifactLocation");
}

}  // namespace

TEST_CASE("SARIF names the log's version and lists every rule of the table for the driver") {
  const JsonValue sarif = parse_sarif(testing::ci_gate_report());
  CHECK(sarif.get_string("version") == "2.1.0");
  CHECK(sarif.get_string("$schema").find("sarif-schema-2.1.0.json") != std::string::npos);
  const JsonValue& driver = member(member(at(member(sarif, "runs"), 0), "tool"), "driver");
  CHECK(driver.get_string("name") == "capguard");
  const auto rules = all_rules();
  REQUIRE(member(driver, "rules").as_array()->size() == rules.size());
  for (size_t i = 0; i < rules.size(); ++i) {
    const JsonValue& rule = at(member(driver, "rules"), i);
    CHECK(rule.get_string("id") == rules[i].id);
    CHECK(member(rule, "shortDescription").get_string("text") == rules[i].summary);
    const std::string help = member(rule, "help").get_string("text");
    CHECK(help.starts_with(rules[i].explanation));
    CHECK(help.find("Fix:") != std::string::npos);
    CHECK(member(rule, "help").get_string("markdown").find(rules[i].summary) != std::string::npos);
    CHECK(member(rule, "defaultConfiguration").get_string("level") == to_string(rules[i].severity));
  }
}

TEST_CASE("a SARIF result points at the user frame, relative to the source root") {
  const Report report = testing::ci_gate_report();
  const JsonValue sarif = parse_sarif(report);
  const JsonValue& sync = result(sarif, 0);
  CHECK(sync.get_string("ruleId") == "sync-during-capture");
  CHECK(sync.get_string("level") == "error");
  const JsonValue& location = at(member(sync, "locations"), 0);
  CHECK(artifact(location).get_string("uri") == "src/train.cu");
  CHECK(artifact(location).get_string("uriBaseId") == "SRCROOT");
  CHECK(member(member(location, "physicalLocation"), "region").get_int("startLine") == 52);
  CHECK(at(member(location, "logicalLocations"), 0).get_string("fullyQualifiedName") ==
        "train_step(float*, CUstream_st*)");
  const JsonValue& base =
      member(member(at(member(sarif, "runs"), 0), "originalUriBaseIds"), "SRCROOT");
  CHECK(base.get_string("uri") == "file:///repo/");
  // The index must name the same rule, or viewers show the wrong help.
  if (auto index = sync.get_int("ruleIndex")) {
    CHECK(all_rules()[static_cast<size_t>(*index)].id == "sync-during-capture");
  } else {
    CHECK(find_rule("sync-during-capture") == nullptr);
  }
}

TEST_CASE("SARIF related locations carry ids the message links to; unplaceable ones are left out") {
  const JsonValue sarif = parse_sarif(testing::ci_gate_report());
  const JsonValue& sync = result(sarif, 0);
  const JsonValue& related = member(sync, "relatedLocations");
  REQUIRE(related.as_array()->size() == 2);  // the unsymbolized event record has no artifact
  CHECK(at(related, 0).get_int("id") == 1);
  CHECK(member(at(related, 0), "message").get_string("text") == "capture-begin");
  CHECK(member(member(at(related, 0), "physicalLocation"), "region").get_int("startLine") == 40);
  CHECK(at(related, 1).get_int("id") == 2);
  CHECK(member(at(related, 1), "message").get_string("text") == "fork: stream 0x77");
  const std::string text = member(sync, "message").get_string("text");
  CHECK(text.find("[capture-begin](1)") != std::string::npos);
  CHECK(text.find("[fork](2)") != std::string::npos);
  CHECK(text.find("](3)") == std::string::npos);
  CHECK(text.find("2 later calls fail only because of this") != std::string::npos);
  // From the program's side outward; CUDA's own frame below it in a stack of its own.
  const JsonValue& frames = member(at(member(sync, "stacks"), 0), "frames");
  CHECK(frames.as_array()->size() == 2);
  CHECK(at(frames, 1).get_string("module") == "train");
  CHECK(member(at(member(sync, "stacks"), 1), "frames").as_array()->size() == 1);
}

TEST_CASE("SARIF results carry the shared stable fingerprint") {
  const Report report = testing::ci_gate_report();
  const JsonValue sarif = parse_sarif(report);
  for (size_t i = 0; i < report.findings.size(); ++i) {
    CHECK(member(result(sarif, i), "partialFingerprints").get_string(kFingerprintKey) ==
          fingerprint(report.findings[i]));
  }
}

TEST_CASE("a SARIF result outside the source root gets an absolute file URI") {
  const JsonValue sarif = parse_sarif(testing::ci_gate_report());
  const JsonValue& escape = at(member(result(sarif, 2), "locations"), 0);
  CHECK(artifact(escape).get_string("uri") == "file:///usr/include/thrust/copy.h");
  CHECK(artifact(escape).get("uriBaseId") == nullptr);
}

TEST_CASE("every SARIF result has an artifact location, even without a symbolized stack") {
  // GitHub code scanning rejects the whole upload when one result has no artifactLocation.
  const JsonValue sarif = parse_sarif(testing::ci_gate_report());
  const JsonValue& unsymbolized = result(sarif, 4);
  CHECK(artifact(at(member(unsymbolized, "locations"), 0)).get_string("uri") ==
        "file:///opt/vendor/libkernels.so");
  CHECK(member(unsymbolized, "message").get_string("text").find("not symbolized") !=
        std::string::npos);
  const JsonValue& stackless = result(sarif, 5);
  CHECK(artifact(at(member(stackless, "locations"), 0)).get_string("uri") == "python3");
  CHECK(artifact(at(member(stackless, "locations"), 0)).get("uriBaseId") == nullptr);
}

TEST_CASE("SARIF without a source root keeps absolute URIs; odd characters are percent-encoded") {
  Report report = testing::ci_gate_report();
  report.findings[0].location.frames[1].file = "/repo/src/my file#1.cu";
  const JsonValue sarif = parse_sarif(report, "");
  CHECK(artifact(at(member(result(sarif, 0), "locations"), 0)).get_string("uri") ==
        "file:///repo/src/my%20file%231.cu");
  CHECK(at(member(sarif, "runs"), 0).get("originalUriBaseIds") == nullptr);
}

TEST_CASE("SARIF output is deterministic and escapes what JSON requires") {
  const Report report = testing::ci_gate_report();
  RenderOptions options;
  options.rules = all_rules();
  options.source_root = "/repo/";  // a trailing slash names the same root
  const std::string once = render_sarif(report, options);
  CHECK(once == render_sarif(report, options));
  CHECK(once.find("\\u0001 \\ufffd") != std::string::npos);
  CHECK(once.find("never joined <back> & \\\"lost\\\"") != std::string::npos);
  CHECK(once.find("\"uri\": \"src/train.cu\"") != std::string::npos);
}

TEST_CASE("a process capguard did not attach to makes the SARIF invocation unsuccessful") {
  const JsonValue sarif = parse_sarif(testing::ci_gate_report());
  const JsonValue& invocation = at(member(at(member(sarif, "runs"), 0), "invocations"), 0);
  CHECK(*member(invocation, "executionSuccessful").as_bool() == false);
  const JsonValue& note = at(member(invocation, "toolExecutionNotifications"), 0);
  CHECK(member(note, "message").get_string("text").find("CUPTI is already in use") !=
        std::string::npos);
}

}  // namespace capguard
