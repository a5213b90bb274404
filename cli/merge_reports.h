// Per node, then merge (issue 33): `capguard report` takes the JSON reports each node wrote
// beside its traces (and any traces no report covers) and gives one report and one gate.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "model/report.h"

namespace capguard::cli {

// Whether a path names a JSON report rather than a trace or a directory of traces.
bool is_json_report_path(const std::string& path);

// Reads each JSON report into `reports`; the file names of the traces they judged go to
// `covered` (not read again). Returns one line per report that could not be read.
std::vector<std::string> read_json_reports(const std::vector<std::string>& paths,
                                           std::vector<Report>& reports,
                                           std::set<std::string>& covered);

}  // namespace capguard::cli
