// One report from several: appended reports keep what their parts point at, and a
// JSON report read back renders as the report it was written from.
#include "model/report_merge.h"

#include <doctest/doctest.h>

#include "render_test_report.h"
#include "report/json_report.h"
#include "report/render.h"

namespace capguard {

TEST_CASE("appending moves process indexes, capture ids and finding indexes past the first") {
  Report into = testing::sample_report();
  Report from = testing::sample_report();
  from.findings[0].process = 1;
  from.captures[0].process = 1;
  append_report(into, std::move(from));
  REQUIRE(into.processes.size() == 2);
  REQUIRE(into.captures.size() == 4);
  CHECK(into.captures[2].id == 3);
  CHECK(into.captures[2].process == 2);
  CHECK(into.captures[2].root_cause == into.findings.size() / 2);
  const Finding& moved = into.findings[into.findings.size() / 2];
  CHECK(moved.process == 2);
  CHECK(moved.capture == 3u);
  CHECK(into.find_capture(moved.capture) == &into.captures[2]);
}

TEST_CASE("appending renames captures in the moved findings' words") {
  Report into = testing::sample_report();
  Report from = testing::sample_report();
  from.findings[0].message = "stream 0x1 (capture #1, global mode) and capture #2; capture #x";
  append_report(into, std::move(from));
  CHECK(into.findings[into.findings.size() / 2].message ==
        "stream 0x1 (capture #3, global mode) and capture #4; capture #x");
}

TEST_CASE("a JSON report read back renders the same text") {
  Report report = testing::sample_report();
  // JSON keeps no addresses (frames were symbolized where the traces were read).
  const auto no_addresses = [](Location& l) {
    for (Frame& f : l.frames) f.address = f.offset = 0;
  };
  for (Finding& f : report.findings) {
    no_addresses(f.location);
    for (Related& r : f.related) no_addresses(r.location);
  }
  for (CaptureInfo& c : report.captures) for_each_location(c, no_addresses);
  report.processes[0].who = WhoRan{"a17", 3, 3, 8, "RANK", "", "3"};
  report.processes[0].trace_path = "/shared/capguard.4242.a17.trace";
  // What Python reports and rule options added to a report: a framework's words and thread, the
  // options.
  report.findings[0].framework_headline = "a PyTorch op ran on the default stream";
  report.findings[0].framework_fix = "run it on the capturing stream";
  report.findings[0].thread_name = "PyTorch autograd thread";
  report.captures[0].mode = trace::CaptureMode::Relaxed;
  report.rule_options = {{"graph-specialization-growth", "late-graphs", 3, 1}};
  RenderOptions options = testing::with_rules();
  options.source = false;
  const JsonParseResult parsed = parse_json(render_json(report), "r.json");
  REQUIRE(parsed.value);
  Report back;
  REQUIRE_FALSE(report_from_json(*parsed.value, back));
  CHECK(back.processes[0].trace_path == report.processes[0].trace_path);
  CHECK(who_label(*back.processes[0].who) == "rank 3 (node a17, GPU 3)");
  CHECK(back.findings[0].framework_headline == report.findings[0].framework_headline);
  CHECK(back.findings[0].framework_fix == report.findings[0].framework_fix);
  CHECK(back.findings[0].thread_name == report.findings[0].thread_name);
  CHECK(back.captures[0].mode == trace::CaptureMode::Relaxed);
  REQUIRE(back.rule_options.size() == 1);
  CHECK(back.rule_options[0].option == "late-graphs");
  CHECK(back.rule_options[0].value == 3);
  CHECK(back.rule_options[0].default_value == 1);
  CHECK(render_text(back, options) == render_text(report, options));
  CHECK(render_json(back) == render_json(report));
}

TEST_CASE("appending keeps the rule options each part was judged by, each once") {
  Report into = testing::sample_report();
  Report from = testing::sample_report();
  into.rule_options = {{"r", "a", 3, 1}};
  from.rule_options = {{"r", "a", 3, 1}, {"r", "b", 5, 2}};
  append_report(into, std::move(from));
  REQUIRE(into.rule_options.size() == 2);
  CHECK(into.rule_options[1].option == "b");
}

}  // namespace capguard
