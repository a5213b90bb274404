#include "report/text_wrap.h"

#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "render_test_report.h"
#include "report/render.h"

namespace capguard {
namespace {

size_t widest_line(const std::string& text) {
  std::istringstream in(text);
  size_t widest = 0;
  for (std::string line; std::getline(in, line);) widest = std::max(widest, display_width(line));
  return widest;
}

std::string words(size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? " " : "") + std::string("word") + std::to_string(i);
  return out;
}

}  // namespace

TEST_CASE("short lines are kept as they are") {
  CHECK(wrap_long_lines("  a b\n  c\n") == "  a b\n  c\n");
  CHECK(wrap_long_lines("no newline") == "no newline");
}

TEST_CASE("a long line breaks at spaces, its rest indented under its text") {
  const std::string line = "  " + words(40);
  const std::string wrapped = wrap_long_lines(line + "\n", false, 60);
  CHECK(widest_line(wrapped) <= 60);
  CHECK(wrapped.starts_with("  word0 word1"));
  CHECK(wrapped.find("\n    word") != std::string::npos);  // two spaces past the block's
  CHECK(wrapped.ends_with("word39\n"));
  std::string rejoined;  // nothing lost: the same words in the same order
  std::istringstream in(wrapped);
  for (std::string w; in >> w;) rejoined += (rejoined.empty() ? "" : " ") + w;
  CHECK(rejoined == words(40));
}

TEST_CASE("a fix continues under its text; a frame line stays whole when asked") {
  const std::string fix = wrap_long_lines("  fix: " + words(30), false, 50);
  CHECK(fix.find("\n       word") != std::string::npos);
  const std::string frame = "    #3 0x1234 in " + words(30);
  CHECK(wrap_long_lines(frame, true, 50) == frame);
  CHECK(wrap_long_lines(frame, false, 50) != frame);
  const std::string summary = "SUMMARY: capguard: " + words(30);  // scripts grep it: whole
  CHECK(wrap_long_lines(summary + "\n", false, 50) == summary + "\n");
  const std::string notice = "==42==capguard: stopped watching: " + words(30);
  CHECK(wrap_long_lines(notice, false, 50) == notice);
  CHECK(wrap_long_lines("==42==ERROR: " + words(30), false, 50) != "==42==ERROR: " + words(30));
}

TEST_CASE("one word longer than the line is kept whole; colors and UTF-8 are not columns") {
  const std::string token(80, 'x');
  CHECK(wrap_long_lines("  " + token + " tail", false, 40) == "  " + token + "\n    tail");
  CHECK(display_width("\033[1mab\033[0m→") == 3);
}

TEST_CASE("the text report has no line over 120 columns, however long the message") {
  Report report = testing::sample_report();
  report.findings[0].message = words(60);
  const std::string text = render_text(report, testing::with_rules());
  CHECK(kTextWidth == 120u);
  CHECK(widest_line(text) <= kTextWidth);
  CHECK(text.find("word59") != std::string::npos);
}

// Counted in bytes, the fold lines of recorded torch.compile reports were 123-125 wide.
// Each "→" is 3 bytes and 1 column; such a line is 117 columns, and wrapping leaves it whole.
TEST_CASE("a stack fold line is measured in columns, not bytes") {
  const std::string fold =
      "      → torch.compile (22 frames) → graph.__exit__ → CUDAGraph.capture_end → torch: "
      "CUDAGraph::instantiate (5 frames)";
  CHECK(fold.size() == 125u);
  CHECK(display_width(fold) == 117u);
  CHECK(wrap_long_lines(fold) == fold);
  const std::string wider = fold + " → CUDAGraph::x";  // past 120 columns: broken
  CHECK(display_width(wider) > kTextWidth);
  CHECK(wrap_long_lines(wider) != wider);
}

}  // namespace capguard
