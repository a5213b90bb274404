// A capguard JSON report read back into a Report: each node of a job judges its own
// ranks where they ran and writes JSON beside its traces; `capguard report` merges those
// reports into one, without the nodes' traces or binaries (findings were symbolized there).
// What the renderers of a merged report need comes back: processes (who ran them), captures,
// findings with their frames, problems, each process's graph coverage counts. Not
// read back: the graph lifecycle table and the rehearsal verdicts (their findings are read).
#pragma once

#include <optional>
#include <string>

#include "model/report.h"
#include "report/json_reader.h"

namespace capguard {

// Whether `root` looks like a capguard JSON report ("tool": "capguard", "findings").
bool is_capguard_json_report(const JsonValue& root);

// Fills `report` from it. Returns what is wrong when it is not a report capguard can read.
std::optional<std::string> report_from_json(const JsonValue& root, Report& report);

}  // namespace capguard
