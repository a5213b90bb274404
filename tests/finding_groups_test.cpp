#include "report/finding_groups.h"

#include <doctest/doctest.h>

#include <string>

#include "render_test_report.h"
#include "report/baseline.h"
#include "report/fingerprint.h"
#include "report/inner_frames.h"
#include "report/json_reader.h"
#include "report/render.h"

namespace capguard {
namespace {

// The sample report's synchronize, again in a second capture of the same site, and once at
// another line.
Report repeated_report() {
  Report report = testing::sample_report();
  Finding again = report.findings[0];
  report.findings.push_back(again);
  Finding elsewhere = report.findings[0];
  elsewhere.location.frames[3].line = 43;
  report.findings.push_back(elsewhere);
  return report;
}

JsonValue parse(const std::string& text) {
  JsonParseResult parsed = parse_json(text, "report");
  REQUIRE_MESSAGE(!parsed.error, parsed.error->to_string());
  return std::move(*parsed.value);
}

const JsonValue& at(const JsonValue& v, size_t i) {
  REQUIRE(v.as_array());
  REQUIRE(i < v.as_array()->size());
  return (*v.as_array())[i];
}

}  // namespace

TEST_CASE("identical findings share a group id; another line is another group") {
  const FindingGroups groups = group_findings(repeated_report());
  CHECK(groups.id == std::vector<uint32_t>{1, 2, 1, 3});
  CHECK(groups.repeat == std::vector<bool>{false, false, true, false});
  CHECK(groups.others[0] == std::vector<size_t>{2});
}

TEST_CASE("JSON and SARIF carry the group id of every finding") {
  const Report report = repeated_report();
  const JsonValue json = parse(render_json(report));
  const JsonValue& findings = *json.get("findings");
  for (size_t i = 0; i < 4; ++i)
    CHECK(at(findings, i).get_int("group") == std::vector<int64_t>{1, 2, 1, 3}[i]);
  const JsonValue sarif = parse(render_sarif(report, testing::with_rules()));
  const JsonValue& results = *at(*sarif.get("runs"), 0).get("results");
  CHECK(at(results, 2).get("properties")->get_int("group") == 1);
  CHECK(at(results, 3).get("properties")->get_int("group") == 3);
}

TEST_CASE("HTML prints a group once, with its count, and keeps an anchor for every finding") {
  Report report = repeated_report();
  report.findings[0].test = report.findings[2].test = "t.py::test_again";  // one test: one group
  const std::string html = render_html(report, testing::with_rules());
  size_t articles = 0;
  for (size_t at = html.find("<article"); at != std::string::npos;
       at = html.find("<article", at + 1))
    ++articles;
  CHECK(articles == 3);  // findings 1 and 3 are one group
  CHECK(html.find("<p class=\"repeats\">and 1 more time") != std::string::npos);
  for (int id = 1; id <= 4; ++id)  // links to any finding still land
    CHECK(html.find("id=\"finding-" + std::to_string(id) + "\"") != std::string::npos);
}

TEST_CASE("HTML names the test a finding happened in") {
  Report report = testing::sample_report();
  report.findings[0].test = "tests/test_step.py::test_capture";
  const std::string html = render_html(report, testing::with_rules());
  CHECK(html.find("in test <code>tests/test_step.py::test_capture</code>") != std::string::npos);
}

TEST_CASE("JSON stacks begin where the program's side begins; CUDA's and capguard's apart") {
  const Report report = testing::sample_report();
  REQUIRE(inner_frame_count(report.findings[0].location) == 3);
  const JsonValue json = parse(render_json(report));
  const JsonValue& location = *at(*json.get("findings"), 0).get("location");
  CHECK(at(*location.get("frames"), 0).get_string("function") ==
        "train_step(float*, CUstream_st*)");
  CHECK(at(*location.get("frames"), 0).get_string("kind") == "user");
  CHECK(location.get_int("user_frame") == 0);
  CHECK(location.get("inner_frames")->as_array()->size() == 3);
  CHECK(at(*location.get("inner_frames"), 0).get_string("kind") == "tool");
  CHECK(at(*location.get("inner_frames"), 1).get_string("kind") == "toolkit");
}

TEST_CASE("a stack of CUDA frames alone, or without a frame outside them, is kept whole") {
  Location location;
  location.frames = {testing::frame(0x10, "", "", 0, "/usr/lib/libcuda.so.1")};
  CHECK(inner_frame_count(location) == 0);
  location = testing::culprit_stack();
  location.user_frame = 1;  // said to be the user's by --user-code: never moved below
  CHECK(inner_frame_count(location) == 1);
}

TEST_CASE("SARIF: the location is the user frame, the first stack starts outside CUDA") {
  const JsonValue sarif = parse(render_sarif(testing::sample_report(), testing::with_rules()));
  const JsonValue& result = at(*at(*sarif.get("runs"), 0).get("results"), 0);
  const JsonValue& physical = *at(*result.get("locations"), 0).get("physicalLocation");
  CHECK(physical.get("region")->get_int("startLine") == 42);
  const JsonValue& stacks = *result.get("stacks");
  REQUIRE(stacks.as_array()->size() == 2);
  CHECK(at(*at(stacks, 0).get("frames"), 0).get("properties")->get_string("kind") == "user");
  CHECK(at(*at(stacks, 1).get("frames"), 0).get("properties")->get_string("kind") == "tool");
}

TEST_CASE("a baseline read from the split JSON stacks gives the same fingerprints") {
  const Report report = testing::sample_report();
  Baseline baseline;
  REQUIRE_FALSE(baseline_from_json(parse(render_json(report)), baseline));
  for (const Finding& f : report.findings) CHECK(baseline.fingerprints.count(fingerprint(f)) == 1);
}

}  // namespace capguard

namespace capguard {
namespace {

// The sample report's process as `ranks` ranks of a job on nodes of 8, each with the same
// finding (its stack address and message's numbers differ: addresses, pids aside).
Report ranks_report(uint32_t ranks, uint32_t world) {
  const Report one = testing::sample_report();
  Report report;
  for (uint32_t rank = 0; rank < ranks; ++rank) {
    ProcessInfo process = one.processes[0];
    process.pid = 100 + rank % 8;
    process.who = WhoRan{"n" + std::to_string(rank / 8), rank, rank % 8, world, "", "", ""};
    process.who->gpu = std::to_string(rank % 8);
    report.processes.push_back(process);
    Finding f = one.findings[0];
    f.pid = process.pid;
    f.process = rank + 1;
    f.capture.reset();
    f.message = "synchronizing stream 0x" + std::to_string(1000 + rank) + " waits";
    f.location.frames[0].address += rank;
    report.findings.push_back(f);
  }
  return report;
}

}  // namespace

TEST_CASE("across processes: one group, on all ranks or on the ones that diverged") {
  Report report = ranks_report(4, 4);
  FindingGroups groups = group_findings(report);
  CHECK(groups.first == std::vector<size_t>{0});
  GroupScope scope = group_scope(report, groups, 0);
  CHECK(scope.words == "on 4 of 4 ranks");
  CHECK_FALSE(scope.diverged);
  const std::string text = render_text(report, testing::with_rules());
  CHECK(text.find("sync-during-capture, on 4 of 4 ranks\n") != std::string::npos);
  CHECK(text.find("shown as rank 0 (node n0, GPU 0) saw it") != std::string::npos);
  CHECK(text.find(" in 4 of 4 ranks (") != std::string::npos);  // every process a rank
  CHECK(text.find("; 1 shown, 3 more repeat them)") != std::string::npos);

  report = ranks_report(4, 4);  // ranks 2 and 3 did not make it
  report.findings.resize(2);
  groups = group_findings(report);
  scope = group_scope(report, groups, 0);
  CHECK(scope.diverged);
  CHECK(scope.words == "on ranks 0, 1 only (2 of 4 ranks)");
  // A report of some ranks only (a rank's own `run`): what it holds, not the job's size.
  Report some = ranks_report(2, 4);
  CHECK(group_scope(some, group_findings(some), 0).words == "on 2 of 2 ranks");
  report.findings.pop_back();
  scope = group_scope(report, group_findings(report), 0);
  CHECK(scope.words == "rank 0 only (1 of 4 ranks)");
  CHECK(render_text(report, testing::with_rules())
            .find("rank 0 only (1 of 4 ranks): rank 0 (node n0, GPU 0)") != std::string::npos);
}

TEST_CASE("SARIF: one result for a group across processes, its ranks as properties") {
  const Report report = ranks_report(3, 3);
  const JsonValue sarif = parse(render_sarif(report, testing::with_rules()));
  const JsonValue& results = *at(*sarif.get("runs"), 0).get("results");
  REQUIRE(results.as_array()->size() == 1);
  CHECK(at(results, 0).get("properties")->get("ranks")->as_array()->size() == 3);
  CHECK(at(results, 0).get("properties")->get_string("where") == "on 3 of 3 ranks");
  const JsonValue json = parse(render_json(report));
  CHECK(at(*json.get("finding_groups"), 0).get_string("where") == "on 3 of 3 ranks");
  CHECK(at(*json.get("findings"), 2).get_string("who") == "rank 2 (node n0, GPU 2)");
}

TEST_CASE("rank lists shorten runs") {
  CHECK(rank_list({0, 1, 2, 3, 17}) == "0-3, 17");
  CHECK(rank_list({3, 4}) == "3, 4");
  CHECK(rank_list({}).empty());
}

}  // namespace capguard
