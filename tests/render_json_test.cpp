#include <doctest/doctest.h>

#include <string>

#include "report/render.h"
#include "render_test_report.h"

namespace capguard {

TEST_CASE("the JSON report follows README.md's contract, field by field") {
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
  CHECK(json.find("\"user_frame\": 3") != std::string::npos);
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

}  // namespace capguard
