#include "report/baseline.h"

#include <cstdint>
#include <vector>

#include "report/finding_filter.h"
#include "report/fingerprint.h"
#include "util/base_name.h"

namespace capguard {
namespace {

constexpr size_t kUnvouchedNamed = 5;

std::string to_hex(uint64_t value) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), kHex[value & 0xf]);
    value >>= 4;
  } while (value != 0);
  return out;
}

// Rebuilds the parts of a finding that fingerprint() reads from its JSON form.
Finding finding_from_json(const JsonValue& json) {
  Finding f;
  f.rule = json.get_string("rule");
  f.api = json.get_string("api");
  const JsonValue* location = json.get("location");
  if (!location) return f;
  // CUDA's and capguard's frames first (innermost first), then the rest: the order of the
  // report in memory, which user_frame (an index into "frames") is counted after.
  size_t inner = 0;
  for (const char* key : {"inner_frames", "frames"}) {
    const JsonValue* frames = location->get(key);
    if (!frames || !frames->as_array()) continue;
    for (const JsonValue& frame_json : *frames->as_array()) {
      Frame frame;
      frame.function = frame_json.get_string("function");
      frame.file = frame_json.get_string("file");
      frame.line = static_cast<int>(frame_json.get_int("line").value_or(0));
      frame.module = frame_json.get_string("module");
      f.location.frames.push_back(std::move(frame));
    }
    if (key[0] == 'i') inner = f.location.frames.size();
  }
  const int64_t user = location->get_int("user_frame").value_or(-1);
  f.location.user_frame = user < 0 ? -1 : static_cast<int>(user + static_cast<int64_t>(inner));
  return f;
}

std::optional<std::string> read_capguard_json(const JsonValue::Array& findings, Baseline& out) {
  out.without_offsets = true;
  for (size_t i = 0; i < findings.size(); ++i) {
    if (!findings[i].as_object() || findings[i].get_string("rule").empty()) {
      return "finding #" + std::to_string(i + 1) + " has no \"rule\"";
    }
    out.fingerprints.insert(fingerprint(finding_from_json(findings[i])));
  }
  return std::nullopt;
}

std::optional<std::string> read_sarif(const JsonValue::Array& runs, Baseline& out) {
  for (const JsonValue& run : runs) {
    const JsonValue* results = run.get("results");
    if (!results || !results->as_array()) continue;
    for (const JsonValue& result : *results->as_array()) {
      const JsonValue* prints = result.get("partialFingerprints");
      const std::string print = prints ? prints->get_string(kFingerprintKey) : std::string();
      if (print.empty()) {
        return "SARIF result without partialFingerprints[\"" + std::string(kFingerprintKey) +
               "\"]: not written by this version of capguard";
      }
      out.fingerprints.insert(print);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> baseline_from_json(const JsonValue& document, Baseline& out) {
  const JsonValue* findings = document.get("findings");
  if (findings && findings->as_array()) return read_capguard_json(*findings->as_array(), out);
  const JsonValue* runs = document.get("runs");
  if (runs && runs->as_array()) return read_sarif(*runs->as_array(), out);
  return std::string(
      "not a capguard report: expected a JSON report with a \"findings\" array or a SARIF log "
      "with \"runs\" (write one with --format json or --format sarif)");
}

std::optional<std::string> load_baseline(const std::string& path, Baseline& out) {
  JsonParseResult parsed = parse_json_file(path);
  if (parsed.error) return parsed.error->to_string();
  out.source = path;
  if (auto error = baseline_from_json(*parsed.value, out)) return path + ": " + *error;
  return std::nullopt;
}

BaselineStats apply_baseline(Report& report, const Baseline& baseline) {
  BaselineStats stats;
  std::set<std::string> seen;
  std::vector<bool> drop(report.findings.size(), false);
  for (size_t i = 0; i < report.findings.size(); ++i) {
    const Finding& finding = report.findings[i];
    std::string print;
    const Frame* offset_frame = fingerprint_offset_frame(finding);
    if (baseline.without_offsets && offset_frame) {
      Finding f = finding;  // as its JSON form would read back
      for (Frame& frame : f.location.frames) frame.offset = 0;
      print = fingerprint(f);
    } else {
      print = fingerprint(finding);
    }
    const bool listed = baseline.fingerprints.count(print) > 0;
    // Listed by rule, API and module only: the entry may be another call of the same code, so
    // the baseline cannot vouch for this one, and it stays.
    if (listed && baseline.without_offsets && offset_frame) {
      if (++stats.unvouched <= kUnvouchedNamed)
        stats.unvouched_where.push_back(finding.rule + " in " +
                                        std::string(base_name(offset_frame->module)) + "+0x" +
                                        to_hex(offset_frame->offset));
    } else {
      drop[i] = listed;
    }
    ++(drop[i] ? stats.known : stats.fresh);
    seen.insert(std::move(print));
  }
  for (const std::string& print : baseline.fingerprints) stats.gone += seen.count(print) == 0;
  erase_findings(report, drop);
  return stats;
}

}  // namespace capguard
