// Output that nothing in a trace can forge (docs/security.md): one escaping routine
// per format, fed the strings an attacker would put in a trace.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "report/json_reader.h"
#include "report/render.h"
#include "report/utf8.h"
#include "report/xml_escape.h"
#include "ci_gate_report.h"
#include "render_test_report.h"
#include "rules/rule_table.h"

namespace capguard {
namespace {

// Bidi override, isolate, line separator, ESC, CR, NUL, DEL, C1, U+FFFE, U+FFFF, a lone
// surrogate (ED A0 80), an invalid byte, and a Markdown link.
const std::string kHostile = std::string("evil\xE2\x80\xAE" "cod\xE2\x81\xA6" "x\xE2\x80\xA8" "y\x1b[2J\r") +
                             std::string("\0", 1) + "\x7f\xC2\x85\xEF\xBF\xBE\xEF\xBF\xBF\xED\xA0\x80\xff" +
                             " [click](https://evil.example)";

Report hostile_report() {
  Report report = testing::sample_report();
  report.processes[0].command = kHostile;
  Finding& f = report.findings[0];
  f.message = kHostile;
  f.api = kHostile;
  f.related[1].detail = kHostile;
  f.location.frames[static_cast<size_t>(f.location.user_frame)].function = kHostile;
  f.location.frames[static_cast<size_t>(f.location.user_frame)].file = "/src/" + kHostile + ".cu";
  report.problems.push_back({Severity::Warning, kHostile});
  return report;
}

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

bool has_invisible_control(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = std::max<size_t>(1, utf8_sequence_length(s, i));
    if (n == 3 && is_invisible_control(utf8_code_point(s, i, n))) return true;
    i += n;
  }
  return false;
}

// No control byte but tab and newline.
bool has_control(std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t' && c != '\n') || u == 0x7f) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("text: trace strings cannot reorder, break or drive what the terminal shows") {
  RenderOptions options;
  options.rules = all_rules();
  options.source = false;
  const std::string text = render_text(hostile_report(), options);
  CHECK(valid_utf8(text));
  CHECK_FALSE(has_invisible_control(text));
  CHECK_FALSE(has_control(text));
  CHECK(text.find("evil\\u{202e}cod\\u{2066}x\\u{2028}y\\x1b[2J\\x0d\\x00\\x7f\\xc2\\x85") !=
        std::string::npos);
  CHECK(terminal_safe("a\xE2\x80\xA9" "b\xE2\x80\x8F") == "a\\u{2029}b\\u{200f}");
  CHECK(terminal_safe("caf\xC3\xA9 \xE2\x86\x92") == "caf\xC3\xA9 \xE2\x86\x92");  // é → kept
}

TEST_CASE("JUnit and HTML: every character is an XML 1.0 Char, bidi shown not obeyed") {
  for (const std::string& xml : {render_junit(hostile_report()),
                                 render_html(hostile_report(), testing::with_rules())}) {
    CHECK(valid_utf8(xml));
    CHECK_FALSE(has_control(xml));
    CHECK(xml.find("\xEF\xBF\xBE") == std::string::npos);
    CHECK(xml.find("\xEF\xBF\xBF") == std::string::npos);
    CHECK_FALSE(has_invisible_control(xml));
  }
  CHECK(xml_escape("a\xEF\xBF\xBE" "b\xEF\xBF\xBF" "c") == "a\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c");
  CHECK(xml_escape("\xEF\xBF\xBD\xEE\x80\x80") == "\xEF\xBF\xBD\xEE\x80\x80");  // U+FFFD, U+E000 kept
}

TEST_CASE("DOT: no NUL, ESC or CR, valid UTF-8, quotes and backslashes escaped") {
  const std::string dot = render_dot(hostile_report());
  CHECK(valid_utf8(dot));
  CHECK_FALSE(has_control(dot));
  CHECK_FALSE(has_invisible_control(dot));
  CHECK(dot.find("\\\\x1b") != std::string::npos);  // shown as text: \x1b
}

TEST_CASE("SARIF: a Markdown link in a trace string is text, capguard's own links stay links") {
  RenderOptions options;
  options.rules = all_rules();
  options.source_root = testing::kSourceRoot;
  const std::string sarif = render_sarif(hostile_report(), options);
  CHECK(valid_utf8(sarif));
  JsonParseResult parsed = parse_json(sarif, "sarif");
  REQUIRE_MESSAGE(!parsed.error, parsed.error->to_string());
  const JsonValue& run = (*parsed.value->get("runs")->as_array())[0];
  const JsonValue& result = (*run.get("results")->as_array())[0];
  const std::string& text = *result.get("message")->get("text")->as_string();
  CHECK(text.find("[click](https://evil.example)") == std::string::npos);
  CHECK(text.find("\\[click\\](https://evil.example)") != std::string::npos);
  CHECK(text.find("[capture-begin](1)") != std::string::npos);
  const JsonValue& related = (*result.get("relatedLocations")->as_array())[1];
  CHECK(related.get("message")->get("text")->as_string()->find("[click]") == std::string::npos);
}

}  // namespace capguard
