#include "report/baseline.h"

#include <vector>

#include "report/finding_filter.h"
#include "report/fingerprint.h"

namespace capguard {
namespace {

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
    std::string print;
    if (baseline.without_offsets) {
      Finding f = report.findings[i];  // as its JSON form would read back
      for (Frame& frame : f.location.frames) frame.offset = 0;
      print = fingerprint(f);
    } else {
      print = fingerprint(report.findings[i]);
    }
    drop[i] = baseline.fingerprints.count(print) > 0;
    ++(drop[i] ? stats.known : stats.fresh);
    seen.insert(std::move(print));
  }
  for (const std::string& print : baseline.fingerprints) stats.gone += seen.count(print) == 0;
  erase_findings(report, drop);
  return stats;
}

}  // namespace capguard
