// Baselines: adopt capguard in CI on a program that already has findings, and fail only on new
// ones. A baseline is an earlier report, JSON (docs/output-formats.md) or SARIF from capguard;
// findings are matched by fingerprint() (report/fingerprint.h), never by pid or address.
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/report.h"
#include "report/json_reader.h"

namespace capguard {

struct Baseline {
  std::string source;
  std::set<std::string> fingerprints;
  // A JSON report carries no frame offsets: it cannot tell apart two calls in code without file
  // and line (a stripped binary, an exported function alone), so it hides none of them (a
  // SARIF baseline, whose fingerprints hold the offset, matches them exactly).
  bool without_offsets = false;
};

// Reads the findings of a capguard JSON report ({"findings": [...]}) or capguard SARIF log
// ({"runs": [{"results": [{"partialFingerprints": ...}]}]}). Returns a message on failure,
// e.g. "old.json:4:9: expected ',' or '}' in object" or "x.json: not a capguard report ...".
std::optional<std::string> load_baseline(const std::string& path, Baseline& out);
std::optional<std::string> baseline_from_json(const JsonValue& document, Baseline& out);

struct BaselineStats {
  size_t known = 0;  // findings removed because the baseline has them
  size_t fresh = 0;  // findings kept: new since the baseline
  size_t gone = 0;   // baseline fingerprints that no finding of this report has (fixed?)
  // Kept though the baseline lists their rule, API and module: it has no offsets to tell their
  // call from another in the same code (without_offsets). Counted in `fresh` too.
  size_t unvouched = 0;
  std::vector<std::string> unvouched_where;  // "rule in module+0xoffset", the first few
};

// Removes the findings already in the baseline, keeping captures' root_cause consistent. Fails
// closed: a finding told apart by its offset is never removed by a baseline without offsets.
BaselineStats apply_baseline(Report& report, const Baseline& baseline);

}  // namespace capguard
