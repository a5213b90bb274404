// The HTML and DOT views, and the source lines the text and HTML views show around user frames.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "report/render.h"
#include "report/source_lines.h"
#include "render_test_report.h"

namespace capguard {
namespace {

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A source file for the sample report's culprit frame (app.cu:42) in a temporary directory.
struct SourceFile {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("capguard-render-html-" + std::to_string(::getpid()));
  std::filesystem::path path = dir / "src" / "app.cu";
  SourceFile() {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path);
    for (int line = 1; line <= 60; ++line)
      out << (line == 42 ? "  cudaStreamSynchronize(s);  // <culprit>"
                         : "  // line " + std::to_string(line))
          << '\n';
  }
  ~SourceFile() { std::filesystem::remove_all(dir); }
};

}  // namespace

TEST_CASE("html: one self-contained page with every finding and a picture of every capture") {
  RenderOptions options;
  options.rules = all_rules();
  const RuleInfo rules[] = {{"sync-during-capture", Severity::Error, "", "", "move the synchronize out"}};
  options.rules = rules;
  const std::string html = render_html(testing::sample_report(), options);
  CHECK(html.starts_with("<!DOCTYPE html>"));
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));
  CHECK(html.find("https://") == std::string::npos);
  CHECK(occurrences(html, "<article class=\"finding") == 2);
  CHECK(html.find("id=\"finding-1\" data-rule=\"sync-during-capture\" data-capture=\"1\"") !=
        std::string::npos);
  CHECK(html.find("id=\"capture-1\"") != std::string::npos);
  CHECK(html.find("id=\"capture-2\"") != std::string::npos);
  CHECK(html.find("<b>fix:</b> move the synchronize out") != std::string::npos);
  // Escaped text: the message's quotes and backslash, the culprit's C++ signature.
  CHECK(html.find("copy &quot;x&quot;\\") != std::string::npos);
  CHECK(html.find("SUMMARY: capguard: 1 error, 1 warning") != std::string::npos);
}

TEST_CASE("html: the graph lifecycle table, every site, only when the report has some") {
  const RenderOptions options = testing::with_rules();
  const std::string none = render_html(testing::lifecycle_report(0), options);
  CHECK(none == render_html(testing::sample_report(), options));
  CHECK(none.find("graph-lifecycle") == std::string::npos);

  Report report = testing::lifecycle_report(7);
  report.graph_sites[1].launches_at_least = true;
  report.graph_sites[1].findings = {1};
  report.graph_sites[1].pool_bytes = 3 * 1024 * 1024 / 2;
  report.graph_sites[2].site.frames[1].function = "step<a&b>(\"x\")";
  report.graph_sites[3].captured = false;
  std::string html = render_html(report, options);
  const size_t section = html.find("<h2 id=\"graph-lifecycle\">");
  REQUIRE(section != std::string::npos);
  // After the findings, before the pictures.
  CHECK(section > html.find("id=\"finding-2\""));
  CHECK(section < html.find("<h2 id=\"captures\">"));
  CHECK(html.find("<details class=\"graph-lifecycle\" open><summary>7 capture site(s), "
                  "142 graph(s)") != std::string::npos);
  // All of them, not the text's top 5; no process column for one process.
  CHECK(occurrences(html, "<tr data-pid=") == 7);
  CHECK(html.find("<th>process</th>") == std::string::npos);
  // Most graphs first; the site's user frame, and every frame on hover.
  CHECK(html.find("<tr data-pid=\"4242\" class=\"flagged\"><td class=\"site\" title=\""
                  "#0 cudaStreamBeginCapture (/usr/lib/x86_64-linux-gnu/libcudart.so.12+0x0)&#10;"
                  "#1 capture_step /src/app.cu:101  &lt;- user frame&#10;"
                  "#2 main /src/app.cu:60\">app.cu:101 (capture_step)</td>"
                  "<td class=\"n\">51</td><td class=\"n\">51</td><td class=\"n\">1</td>"
                  "<td class=\"n\">0</td><td class=\"n\">51</td>") != std::string::npos);
  CHECK(html.find(">103+</td><td class=\"n\">51.0 ms</td><td class=\"n\">1.5 MiB</td><td></td>"
                  "<td><a href=\"#finding-2\">escaped-sync-copy</a></td></tr>") !=
        std::string::npos);
  CHECK(html.find(">app.cu:101") < html.find(">app.cu:105"));
  CHECK(html.find(">app.cu:105") < html.find(">app.cu:103"));
  // The cell names the function shortly (step<…>), escaped; its hover the whole name.
  CHECK(html.find(">app.cu:102 (step&lt;…&gt;)</td>") != std::string::npos);
  CHECK(html.find("title=\"#0 cudaStreamBeginCapture (/usr/lib/x86_64-linux-gnu/libcudart.so.12"
                  "+0x0)&#10;#1 step&lt;a&amp;b&gt;(&quot;x&quot;) /src/app.cu:102") !=
        std::string::npos);
  CHECK(html.find("app.cu:103 (capture_step) <small>(graph API)</small>") != std::string::npos);

  ProcessInfo worker;
  worker.pid = 5000;
  report.processes.push_back(worker);
  report.graph_sites[0].pid = 5000;
  report.graph_sites[0].process = 2;
  html = render_html(report, options);
  CHECK(html.find("<th>process</th>") != std::string::npos);
  CHECK(html.find("<tr data-pid=\"5000\"><td class=\"n\">5000</td>") >
        html.find("<tr data-pid=\"4242\"><td class=\"n\">4242</td>"));  // by process
}

TEST_CASE("html and text: the source lines around the user frame, when the file is readable") {
  SourceFile source;
  RenderOptions options;
  options.rules = all_rules();
  options.source_root = source.dir.string();  // /src/app.cu is found as DIR/src/app.cu
  const std::string text = render_text(testing::sample_report(), options);
  CHECK(text.find("    #3 0x555500002345 in train_step(float*, CUstream_st*) /src/app.cu:42 (app)\n"
                  "           41 |   // line 41\n"
                  "      >    42 |   cudaStreamSynchronize(s);  // <culprit>\n"
                  "           43 |   // line 43\n") != std::string::npos);
  const std::string html = render_html(testing::sample_report(), options);
  CHECK(html.find("<span class=\"culprit\">   42 |   cudaStreamSynchronize(s);  // "
                  "&lt;culprit&gt;</span>") != std::string::npos);
  // JUnit's failure text is the text report's, source lines under the same root.
  CHECK(render_junit(testing::sample_report(), options)
            .find("42 |   cudaStreamSynchronize(s);  // &lt;culprit&gt;") != std::string::npos);
  CHECK(render_junit(testing::sample_report()).find("// &lt;culprit&gt;") == std::string::npos);
  options.source = false;
  CHECK(render_junit(testing::sample_report(), options).find("// &lt;culprit&gt;") ==
        std::string::npos);
  CHECK(render_text(testing::sample_report(), options).find(" | ") == std::string::npos);
  CHECK(render_html(testing::sample_report(), options).find("<pre class=\"source\">") ==
        std::string::npos);
}

TEST_CASE("source lines: missing files and lines give nothing; the context stops at the ends") {
  SourceFile source;
  SourceReader reader(source.dir.string());
  CHECK(reader.around("/no/such/file.cu", 3, 1).empty());
  CHECK(reader.around(source.path.string(), 61, 1).empty());
  const auto first = reader.around(source.path.string(), 1, 2);
  REQUIRE(first.size() == 3);
  CHECK(first[0].number == 1);
  const auto last = reader.around(source.path.string(), 60, 1);
  REQUIRE(last.size() == 2);
  CHECK(last[1].text == "  // line 60");
}

TEST_CASE("dot: one digraph per finding that concerns a capture") {
  const std::string dot = render_dot(testing::sample_report());
  CHECK(occurrences(dot, "digraph ") == 2);
  CHECK(dot.find("digraph \"finding 1: sync-during-capture\" {") != std::string::npos);
  CHECK(dot.find("subgraph cluster_capture") != std::string::npos);
  CHECK(render_dot(Report{}) == "// capguard: no finding concerns a capture\n");
}

}  // namespace capguard
