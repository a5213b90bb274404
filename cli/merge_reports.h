// Per node, then merge: `capguard report` takes the JSON reports each node wrote
// beside its traces (and any traces no report covers) and gives one report and one gate.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/report.h"

namespace capguard::cli {

// Whether a path names a JSON report rather than a trace or a directory of traces.
bool is_json_report_path(const std::string& path);

// What tells one traced process from another: its host, pid and start ('p' record).
// Two containers with the same host name and pid differ by their start; a trace and a report
// of the same name in different directories are one process only when all three agree.
struct ProcessIdentity {
  std::string host;
  uint32_t pid = 0;
  uint64_t start_unix_ns = 0;
  auto operator<=>(const ProcessIdentity&) const = default;
};
ProcessIdentity identity_of(const ProcessInfo& process);
// From a trace's header records alone (its first lines); nullopt when they cannot be read.
std::optional<ProcessIdentity> trace_identity(const std::string& path);

// The traces the JSON reports judged: by file name, the processes of that name they hold.
using CoveredTraces = std::map<std::string, std::set<ProcessIdentity>>;
// Whether `trace` is one of them: its file name and, read from its header, its process.
bool is_covered(const CoveredTraces& covered, const std::string& trace);

// Reads each JSON report into `reports` (the same file named twice, or through a link, is read
// once) and each one's path into `sources`; the traces they judged go to `covered` (not read
// again). Returns one line per report that could not be read.
std::vector<std::string> read_json_reports(const std::vector<std::string>& paths,
                                           std::vector<Report>& reports,
                                           std::vector<std::string>& sources,
                                           CoveredTraces& covered);

// What a merge cannot vouch for, one line each: a node report judged with a gate
// other than `fail_on` (`judged`: each one's Report::judged_fail_on, empty when it does not
// say), ranks that processes of two hosts claim, and one process found in two inputs (a report
// given twice under two names, a trace beside its report under another name). `merged`: every
// input's processes.
std::vector<std::string> merge_doubts(const std::vector<std::string>& judged,
                                      const std::vector<std::string>& sources,
                                      const std::string& fail_on, const Report& merged);

}  // namespace capguard::cli
