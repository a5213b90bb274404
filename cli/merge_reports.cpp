#include "cli/merge_reports.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <sstream>

#include "report/finding_groups.h"
#include "report/json_report.h"
#include "trace/format.h"
#include "trace/reader.h"
#include "util/regular_file.h"

namespace capguard::cli {

namespace fs = std::filesystem;

namespace {

// The header records a trace begins with ('v', 'p', 'c', 'w', 'h': format.h) fit in this many
// lines of at most kMaxLineLength bytes each.
constexpr size_t kHeaderLines = 8;

class IdentitySink final : public trace::TraceSink {
 public:
  void on_process(const trace::ProcessRecord& p) override {
    identity.pid = p.pid;
    identity.start_unix_ns = p.start_unix_ns;
    saw_process = true;
  }
  void on_who_ran(const trace::WhoRanRecord& w) override { identity.host = std::string(w.host); }
  ProcessIdentity identity;
  bool saw_process = false;
};

}  // namespace

bool is_json_report_path(const std::string& path) {
  std::error_code error;
  return path.ends_with(".json") && !fs::is_directory(path, error);
}

ProcessIdentity identity_of(const ProcessInfo& process) {
  return {process.who ? process.who->host : std::string(), process.pid, process.start_unix_ns};
}

std::optional<ProcessIdentity> trace_identity(const std::string& path) {
  OpenRegular why;
  const int fd = open_regular(path, why);
  if (fd < 0) return std::nullopt;
  std::string head(kHeaderLines * (trace::kMaxLineLength + 1), '\0');
  size_t got = 0;
  while (got < head.size()) {
    const ssize_t n = read(fd, head.data() + got, head.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  head.resize(got);
  std::istringstream in(head);
  IdentitySink sink;
  (void)trace::read_trace(in, path, sink);  // a cut last line is expected: the records before it
  if (!sink.saw_process) return std::nullopt;
  return sink.identity;
}

bool is_covered(const CoveredTraces& covered, const std::string& trace) {
  const auto named = covered.find(fs::path(trace).filename().string());
  if (named == covered.end()) return false;
  // The name alone proves nothing (a planted JSON, two containers' traces): the
  // process must be one the report holds.
  const auto identity = trace_identity(trace);
  return identity && named->second.contains(*identity);
}

std::vector<std::string> read_json_reports(const std::vector<std::string>& paths,
                                           std::vector<Report>& reports,
                                           std::vector<std::string>& sources,
                                           CoveredTraces& covered) {
  std::vector<std::string> problems;
  std::set<std::pair<dev_t, ino_t>> seen;
  for (const std::string& path : paths) {
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && !seen.insert({st.st_dev, st.st_ino}).second)
      continue;  // the same file again: read once, as a trace named twice is
    const JsonParseResult parsed = parse_json_file(path);
    if (!parsed.value) {
      problems.push_back("cannot read report: " + parsed.error->to_string());
      continue;
    }
    Report report;
    if (auto why = report_from_json(*parsed.value, report)) {
      problems.push_back("cannot read report: " + path + ": " + *why);
      continue;
    }
    for (const ProcessInfo& process : report.processes)
      if (!process.trace_path.empty())
        covered[fs::path(process.trace_path).filename().string()].insert(identity_of(process));
    reports.push_back(std::move(report));
    sources.push_back(path);
  }
  return problems;
}

std::vector<std::string> merge_doubts(const std::vector<std::string>& judged_with,
                                      const std::vector<std::string>& sources,
                                      const std::string& fail_on, const Report& merged) {
  std::vector<std::string> doubts;
  for (size_t i = 0; i < judged_with.size(); ++i) {
    const std::string& judged = judged_with[i];
    if (judged == fail_on) continue;
    // Its problems were weighed by that gate: a node run with --fail-on never calls a trace
    // without its end, or capguard never attached, a warning.
    doubts.push_back(
        judged.empty()
            ? "cannot vouch for " + sources[i] +
                  ": it does not say which --fail-on judged it (made by an earlier capguard?); "
                  "make it again with this one"
            : "cannot vouch for " + sources[i] + ": it was judged with --fail-on " + judged +
                  ", this merge with --fail-on " + fail_on +
                  "; make the node reports with the merge's --fail-on");
  }
  for (std::string& line : ranks_on_two_hosts(merged))
    doubts.push_back(line + ": two processes say they are one rank (two jobs' reports, or a "
                            "report of another job); the merge cannot tell which is the job's");
  std::map<ProcessIdentity, std::string> where;  // bounded by the processes
  size_t named = 0;
  for (const ProcessInfo& process : merged.processes) {
    const ProcessIdentity identity = identity_of(process);
    if (identity.start_unix_ns == 0) continue;  // a report of an earlier capguard: cannot tell
    const auto [at, fresh] = where.try_emplace(identity, process.trace_path);
    if (fresh || named++ >= kRankRunsNamed) continue;
    doubts.push_back("process " + std::to_string(identity.pid) +
                     (identity.host.empty() ? "" : " on host " + identity.host) +
                     " is in two inputs (" + at->second + " and " + process.trace_path +
                     "): a report given twice under two names, or a trace beside its report "
                     "under another name; its findings would count twice");
  }
  return doubts;
}

}  // namespace capguard::cli
