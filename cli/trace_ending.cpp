#include "cli/trace_ending.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

#include "util/regular_file.h"

namespace capguard::cli {

TraceEnding scan_trace_ending(const std::string& path) {
  TraceEnding ending;
  OpenRegular why;
  const int fd = open_regular(path, why);
  if (fd < 0) return ending;
  // The first bytes of each line are enough to tell its record.
  constexpr size_t kPrefix = 9;  // "i failed "
  std::string prefix;
  const auto judge = [&] {
    const std::string_view p(prefix);
    if (p.starts_with("z ")) ending.has_end = true;
    if (p == "i failed" || p.starts_with("i failed ")) ending.attach_failed = true;
    if (p.starts_with("i ")) ending.has_attach = true;
    prefix.clear();
  };
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      return ending;
    }
    if (n == 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      const char c = buffer[i];
      if (c == '\n') {
        judge();
      } else if (prefix.size() < kPrefix) {
        prefix += c;
      }
    }
  }
  judge();  // a last line without its newline
  close(fd);
  ending.readable = true;
  return ending;
}

std::vector<TraceFacts> scan_trace_facts(const Report& report,
                                         const std::vector<std::string>& still_running,
                                         int after_s) {
  std::vector<TraceFacts> facts;
  for (const ProcessInfo& process : report.processes) {
    if (process.trace_path.empty()) continue;
    const TraceEnding ending = scan_trace_ending(process.trace_path);
    if (!ending.readable) continue;  // already a problem of its own
    TraceFacts fact;
    fact.who = "process " + std::to_string(process.pid) + " (" + process.command + ", " +
               process.trace_path + ")";
    fact.attach_failed =
        ending.attach_failed || (!process.attached && !process.attach_message.empty());
    if (!process.attached) fact.attach_message = process.attach_message;
    fact.has_attach = ending.has_attach;
    fact.has_end = ending.has_end;
    if (std::find(still_running.begin(), still_running.end(), process.trace_path) !=
        still_running.end())
      fact.still_running_after_s = after_s;
    facts.push_back(std::move(fact));
  }
  return facts;
}

}  // namespace capguard::cli
