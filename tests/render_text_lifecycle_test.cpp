// The text report's graph lifecycle section (report/render_text_lifecycle.cpp) and the cells it
// shares with the HTML table (report/lifecycle_table.cpp).
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "render_test_report.h"
#include "report/lifecycle_table.h"
#include "report/render.h"

namespace capguard {
namespace {

std::string text_of(const Report& report) { return render_text(report, testing::with_rules()); }

// The section: from its heading to the blank line before SUMMARY; empty when absent.
std::string section_of(const std::string& text) {
  const size_t begin = text.find("graph lifecycle (");
  if (begin == std::string::npos) return {};
  return text.substr(begin, text.find("SUMMARY:", begin) - begin);
}

void check_line_widths(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    INFO(line);
    CHECK(text_width(line) < 100);
  }
}

}  // namespace

TEST_CASE("lifecycle text: no section without graph sites") {
  const Report report = testing::lifecycle_report(0);
  CHECK(text_of(report) == text_of(testing::sample_report()));
  CHECK(text_of(report).find("graph lifecycle") == std::string::npos);
}

TEST_CASE("lifecycle text: one site, after the findings and before the SUMMARY line") {
  Report report = testing::lifecycle_report(1);
  report.graph_sites[0].pool_bytes = 3 * 1024 * 1024 / 2;
  const std::string text = text_of(report);
  // Each row: the site column (36), then the numbers.
  CHECK(section_of(text) ==
        "graph lifecycle (1 capture site):\n"
        "  site                                "
        " graphs  keys  alive  launches  capture+inst      pool\n"
        "  app.cu:100 (capture_step)           "
        "      1     1      1         1       1.00 ms   1.5 MiB\n"
        "\n");
  CHECK(text.find("[escaped-sync-copy] see `capguard explain escaped-sync-copy`\n\n"
                  "graph lifecycle (1 capture site):\n") != std::string::npos);
  CHECK(
      text.ends_with("\n\nSUMMARY: capguard: 1 error, 1 warning, 0 notes in 1 process "
                     "(2 captures: 1 ok, 1 invalidated)\n"));
}

TEST_CASE("lifecycle text: the top 5 sites by graphs, then launches; the rest counted") {
  const std::string section = section_of(text_of(testing::lifecycle_report(7)));
  CHECK(section ==
        "graph lifecycle (7 capture sites):\n"
        "  site                                "
        " graphs  keys  alive  launches  capture+inst      pool\n"
        "  app.cu:101 (capture_step)           "
        "     51    51     51       103       51.0 ms         -\n"
        "  app.cu:105 (capture_step)           "
        "     40    40     40        80       40.0 ms         -\n"
        "  app.cu:103 (capture_step)           "
        "     40    40     40        40       40.0 ms         -\n"
        "  app.cu:106 (capture_step)           "
        "      5     5      5         5       5.00 ms         -\n"
        "  app.cu:104 (capture_step)           "
        "      3     3      3         9       3.00 ms         -\n"
        "  and 2 more sites (3 graphs)\n"
        "\n");
  Report six = testing::lifecycle_report(6);
  CHECK(section_of(text_of(six)).find("  and 1 more site (1 graph)\n") != std::string::npos);
  CHECK(section_of(text_of(testing::lifecycle_report(5))).find("more site") == std::string::npos);
}

TEST_CASE("lifecycle text: a floor of launches reads N+, a site's findings name their rules") {
  Report report = testing::lifecycle_report(2);
  report.graph_sites[1].launches_at_least = true;
  Finding churn;
  churn.rule = "graph-rebuilt-every-step";
  churn.severity = Severity::Warning;
  churn.pid = 4242;
  report.findings.push_back(churn);
  report.findings.push_back(churn);
  report.graph_sites[1].findings = {2, 3, 1};
  report.graph_sites[0].captured = false;
  const std::string section = section_of(text_of(report));
  CHECK(section.find("  app.cu:101 (capture_step)           "
                     "     51    51     51      103+       51.0 ms         -\n"
                     "    ← graph-rebuilt-every-step, escaped-sync-copy\n") != std::string::npos);
  CHECK(section.find("  app.cu:100 (capture_step)           "
                     "      1     1      1         1       1.00 ms         -\n"
                     "    (built with the graph API: the site is its cudaGraphInstantiate)\n") !=
        std::string::npos);
  check_line_widths(section);
}

TEST_CASE("lifecycle text: several processes get a table each, as their findings get a block") {
  Report report = testing::lifecycle_report(7);
  ProcessInfo worker;
  worker.pid = 5000;
  worker.command = "./worker";
  worker.attached = true;
  report.processes.push_back(worker);
  GraphSiteInfo site = testing::graph_site(7, "serve", 9, 18);
  site.pid = 5000;
  site.process = 2;
  report.graph_sites.push_back(site);
  site.pid = 6000;  // a process the report has no record of
  site.process = 0;
  report.graph_sites.push_back(site);
  const std::string section = section_of(text_of(report));
  CHECK(
      section.starts_with("graph lifecycle (9 capture sites in 3 processes):\n"
                          "  process 4242 (7 capture sites): ./app --steps 3\n"
                          "    site                                "
                          " graphs  keys  alive  launches  capture+inst      pool\n"
                          "    app.cu:101 (capture_step)           "
                          "     51    51     51       103       51.0 ms         -\n"));
  CHECK(section.find("    and 2 more sites (3 graphs)\n"
                     "  process 5000 (1 capture site): ./worker\n"
                     "    site                                "
                     " graphs  keys  alive  launches  capture+inst      pool\n"
                     "    app.cu:7 (serve)                    "
                     "      9     9      9        18       9.00 ms         -\n"
                     "  process 6000 (1 capture site)\n") != std::string::npos);
  check_line_widths(section);
}

TEST_CASE("lifecycle text: long names are cut to keep lines under 100 characters") {
  Report report = testing::lifecycle_report(1);
  const std::string function =
      "at::native::(anonymous namespace)::capture_step<float, 128>(at::Tensor const&, "
      "c10::optional<at::Tensor> const&, long)";
  report.graph_sites[0].site.frames[1].function = function;
  report.processes[0].command = "python -m torch.distributed.run " + std::string(120, 'x');
  ProcessInfo other;
  other.pid = 5000;
  report.processes.push_back(other);
  std::string section = section_of(text_of(report));
  // The function by its name: no anonymous namespace, template arguments or parameters.
  CHECK(section.find("    app.cu:100 (at::native::capture_st…)      1") != std::string::npos);
  CHECK(section.find("  process 4242 (1 capture site): python -m torch.distributed.run xxx") !=
        std::string::npos);
  check_line_widths(section);
  // A file name too long for the column loses the function, then its own end, never its line.
  report.graph_sites[0].site.frames[1].file = "/src/" + std::string(40, 'f') + ".cu";
  section = section_of(text_of(report));
  CHECK(section.find("    " + std::string(31, 'f') + "…:100 ") != std::string::npos);
  check_line_widths(section);
  // Without a user frame, the first frame outside CUDA, not cudaStreamBeginCapture's.
  report.graph_sites[0].site.frames[1].file = "/src/app.cu";
  report.graph_sites[0].site.user_frame = -1;
  CHECK(section_of(text_of(report)).find("    app.cu:100 (at::native::capture_st…)") !=
        std::string::npos);
  // Text from the trace cannot drive the terminal.
  report.graph_sites[0].site.frames[1].file = "/src/a\033[2Jb.cu";
  CHECK(section_of(text_of(report)).find("a\\x1b[2Jb.cu:100") != std::string::npos);
}

TEST_CASE("lifecycle cells: sizes in KiB/MiB/GiB, times in ms or s, '-' when none") {
  CHECK(bytes_cell(0) == "-");
  CHECK(bytes_cell(512) == "512 B");
  CHECK(bytes_cell(1536) == "1.5 KiB");
  CHECK(bytes_cell(1'288'490'189) == "1.2 GiB");
  CHECK(bytes_cell(1024 * 1024 - 1) == "1.0 MiB");  // never "1024.0 KiB"
  CHECK(duration_cell(0) == "-");
  CHECK(duration_cell(420'000) == "0.42 ms");
  CHECK(duration_cell(48'213'456) == "48.2 ms");
  CHECK(duration_cell(2'345'000'000) == "2.35 s");
  CHECK(duration_cell(999'990'000) == "1.00 s");
  CHECK(duration_cell(400'000'000'000) == "400 s");
  CHECK(ellipsize("abcdef", 4) == "abc…");
  CHECK(ellipsize("café", 4) == "café");
  CHECK(text_width("←é") == 2);
}

}  // namespace capguard
