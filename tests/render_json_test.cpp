#include <doctest/doctest.h>

#include <string>

#include "render_test_report.h"
#include "report/json_reader.h"
#include "report/render.h"

namespace capguard {

TEST_CASE("the JSON report follows docs/output-formats.md's contract, field by field") {
  const std::string json = render_json(testing::sample_report());
  CHECK(json.starts_with("{\n  \"tool\": \"capguard\",\n  \"version\": \""));
  CHECK(json.find("  \"processes\": [\n"
                  "    {\n"
                  "      \"pid\": 4242,\n"
                  "      \"command\": \"./app --steps 3\",\n"
                  "      \"attached\": true\n"
                  "    }\n"
                  "  ],\n") != std::string::npos);
  CHECK(json.find("\"stream\": \"0x5555deadbeef\",\n      \"mode\": \"global\",\n"
                  "      \"status\": \"invalidated\",\n      \"nodes\": null,") !=
        std::string::npos);
  CHECK(json.find("\"end\": null,\n      \"root_cause\": 0\n") != std::string::npos);
  CHECK(json.find("\"result\": \"cudaErrorStreamCaptureUnsupported\",\n"
                  "      \"pid\": 4242,\n      \"thread\": 4243,\n"
                  "      \"capturing_thread\": true,\n      \"capture\": 1,") != std::string::npos);
  CHECK(json.find("\"consequences\": 3") != std::string::npos);
  CHECK(json.find("\"role\": \"fork\"") != std::string::npos);
  CHECK(json.find("\"user_frame\": 0") != std::string::npos);  // after inner_frames
  CHECK(
      json.ends_with("  \"summary\": {\n    \"errors\": 1,\n    \"warnings\": 1,\n"
                     "    \"notes\": 0\n  }\n}\n"));
}

TEST_CASE("a frame's unknown parts are null, not empty strings or zero") {
  Report report;
  Finding finding;
  finding.location.frames = {testing::frame(0x10, "", "", 0, "/lib/libx.so")};
  report.findings.push_back(finding);
  const std::string json = render_json(report);
  CHECK(json.find("\"function\": null,\n            \"file\": null,\n"
                  "            \"line\": null,\n            \"module\": \"/lib/libx.so\"") !=
        std::string::npos);
  CHECK(json.find("\"user_frame\": null") != std::string::npos);
  CHECK(json.find("\"capture\": null") != std::string::npos);
  CHECK(json.find("\"related\": [],") != std::string::npos);
}

TEST_CASE("strings are escaped, and bytes that are not UTF-8 become U+FFFD") {
  Report report = testing::sample_report();
  report.processes[0].command =
      std::string("./app \"quoted\" back\\slash\ttab\nnl \x01 \xff ") + "caf\xc3\xa9 \xc3";
  const std::string json = render_json(report);
  CHECK(json.find(
            R"("command": "./app \"quoted\" back\\slash\ttab\nnl \u0001 \ufffd café \ufffd")") !=
        std::string::npos);
  CHECK(json.find(R"(the graph has no copy \"x\"\\")") != std::string::npos);
}

TEST_CASE("the same report renders byte for byte the same") {
  CHECK(render_json(testing::sample_report()) == render_json(testing::sample_report()));
}

namespace {

JsonValue parsed(const Report& report) {
  JsonParseResult result = parse_json(render_json(report), "report.json");
  REQUIRE_MESSAGE(!result.error, result.error->to_string());
  return *result.value;
}

std::vector<std::string> keys_of(const JsonValue& object) {
  std::vector<std::string> keys;
  REQUIRE(object.as_object() != nullptr);
  for (const auto& [key, value] : *object.as_object()) keys.push_back(key);
  return keys;
}

}  // namespace

TEST_CASE("graph_lifecycle only when the report has graph sites: other reports keep their shape") {
  const Report report = testing::lifecycle_report(0);
  CHECK(render_json(report).find("graph_lifecycle") == std::string::npos);
  CHECK(render_json(report) == render_json(testing::sample_report()));
  CHECK(keys_of(parsed(report)) == std::vector<std::string>{"tool", "version", "processes",
                                                            "captures", "findings", "summary"});
}

TEST_CASE("graph_lifecycle: one object per site, after the captures, with the documented keys") {
  Report report = testing::lifecycle_report(1);
  GraphSiteInfo& site = report.graph_sites[0];
  site.updates = 4;
  site.launches_at_least = true;
  site.capture_ns = 48'213'456;  // 48.213 ms
  site.pool_bytes = 1'288'490'189;
  site.findings = {1};
  const JsonValue json = parsed(report);
  CHECK(keys_of(json) == std::vector<std::string>{"tool", "version", "processes", "captures",
                                                  "graph_lifecycle", "findings", "summary"});
  const JsonValue::Array* sites = json.get("graph_lifecycle")->as_array();
  REQUIRE(sites != nullptr);
  REQUIRE(sites->size() == 1);
  const JsonValue& row = (*sites)[0];
  CHECK(keys_of(row) == std::vector<std::string>{"pid", "site", "captured", "graphs", "keys",
                                                 "topologies", "updates", "alive_at_exit",
                                                 "launches", "launches_exact", "capture_ms",
                                                 "pool_bytes", "findings", "held_memory"});
  CHECK(row.get_int("pid") == 4242);
  CHECK(*row.get("captured")->as_bool());
  CHECK(row.get_int("graphs") == 1);
  CHECK(row.get_int("keys") == 1);
  CHECK(row.get_int("topologies") == 1);
  CHECK(row.get_int("updates") == 4);
  CHECK(row.get_int("alive_at_exit") == 1);
  CHECK(row.get_int("launches") == 1);
  CHECK(!*row.get("launches_exact")->as_bool());
  CHECK(*row.get("capture_ms")->as_number() == doctest::Approx(48.213));
  CHECK(row.get_int("pool_bytes") == 1'288'490'189);
  REQUIRE(row.get("findings")->as_array()->size() == 1);
  CHECK(row.get("findings")->as_array()->at(0).as_number() != nullptr);
  CHECK(*row.get("findings")->as_array()->at(0).as_number() == 1);
  // The site is a location like a capture's "begin": frames from the program's side (the
  // runtime's cudaStreamBeginCapture below them), then the user frame.
  const JsonValue* where = row.get("site");
  CHECK(keys_of(*where) == std::vector<std::string>{"frames", "inner_frames", "user_frame"});
  CHECK(where->get_int("user_frame") == 0);
  CHECK(where->get("frames")->as_array()->at(0).get_string("function") == "capture_step");
  CHECK(where->get("frames")->as_array()->at(0).get_int("line") == 100);
  CHECK(where->get("inner_frames")->as_array()->size() == 1);
  // Three decimals, written exactly.
  CHECK(render_json(report).find("\"capture_ms\": 48.213,\n") != std::string::npos);
  site.capture_ns = 1'499;
  CHECK(render_json(report).find("\"capture_ms\": 0.001,\n") != std::string::npos);
  site.capture_ns = 0;
  CHECK(render_json(report).find("\"capture_ms\": 0.000,\n") != std::string::npos);
}

TEST_CASE("graph_lifecycle: every site in the report's order, exact launches, several processes") {
  Report report = testing::lifecycle_report(7);
  report.graph_sites[6].pid = 5000;
  report.graph_sites[6].captured = false;
  const JsonValue json = parsed(report);
  const JsonValue::Array& sites = *json.get("graph_lifecycle")->as_array();
  REQUIRE(sites.size() == 7);
  for (size_t i = 0; i < sites.size(); ++i) {
    CHECK(sites[i].get("site")->get("frames")->as_array()->at(0).get_int("line") == 100 + int(i));
    CHECK(sites[i].get_int("graphs") == int64_t(report.graph_sites[i].graphs));
    CHECK(*sites[i].get("launches_exact")->as_bool());
    CHECK(sites[i].get("findings")->as_array()->empty());
  }
  CHECK(sites[5].get_int("pid") == 4242);
  CHECK(sites[6].get_int("pid") == 5000);
  CHECK(!*sites[6].get("captured")->as_bool());
}

}  // namespace capguard
