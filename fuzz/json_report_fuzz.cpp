// libFuzzer target for the JSON report reader: a node's report is untrusted input
// now that `capguard report` merges them. Any bytes must end in a report or a message, never a
// crash, a hang or unbounded memory; and a report read back is written and read again with the
// same processes, findings and problems (what the merge counts), its names escaped.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "report/json_reader.h"
#include "report/json_report.h"
#include "report/render.h"

namespace {

// The names capguard prints as they are (json_report.cpp's name_at) hold no control character.
void check_names(const capguard::Report& report) {
  const auto plain = [](const std::string& s) {
    for (char c : s)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) abort();
  };
  for (const capguard::Finding& f : report.findings) {
    plain(f.rule), plain(f.result_name), plain(f.thread_name);
    for (const capguard::Related& r : f.related) plain(r.role);
  }
  for (const capguard::RuleOptionValue& o : report.rule_options) plain(o.rule), plain(o.option);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const capguard::JsonParseResult parsed = capguard::parse_json(text, "fuzz.json");
  if (!parsed.value) return 0;
  capguard::Report report;
  if (capguard::report_from_json(*parsed.value, report)) return 0;
  check_names(report);
  const std::string again = capguard::render_json(report);
  const capguard::JsonParseResult reparsed = capguard::parse_json(again, "again.json");
  if (!reparsed.value) abort();  // capguard's own JSON always parses
  capguard::Report second;
  if (capguard::report_from_json(*reparsed.value, second)) abort();
  if (second.processes.size() != report.processes.size() ||
      second.findings.size() != report.findings.size() ||
      second.problems.size() != report.problems.size())
    abort();
  return 0;
}
