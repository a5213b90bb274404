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
  options.source = false;
  CHECK(render_text(testing::sample_report(), options).find(" | ") == std::string::npos);
  CHECK(render_html(testing::sample_report(), options).find("<pre class=\"source\">") ==
        std::string::npos);
}

TEST_CASE("source lines: missing files and lines give nothing; the context stops at the ends") {
  SourceFile source;
  SourceReader reader;
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
