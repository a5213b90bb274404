#include "report/finding_groups.h"

#include <fmt/format.h>

#include <string>
#include <unordered_map>

namespace capguard {
namespace {

std::string group_key(const Report& report, const Finding& f) {
  const Location& l = f.location;
  std::string where;
  if (const Frame* user = l.user()) {
    where = user_line_key(*user);
  } else {
    where = fmt::format("#{}", l.stack_id);
    // A thread with no user frame: twins are the findings of one rule on that kind of thread
    // for work one user line started (issue 32: the autograd thread's cuBLAS set-up, 4 calls).
    for (const Related& related : f.related)
      if (const Frame* start = related.location.user(); start && related.role == "started-by")
        where = fmt::format("{} started at {}", f.thread_name, user_line_key(*start));
  }
  const CaptureInfo* capture = report.find_capture(f.capture);
  return fmt::format("{}\n{}\n{}\n{}\n{}\n{}", f.rule, f.pid, f.process, where,
                     capture != nullptr ? capture->begin.stack_id : 0, f.test);
}

}  // namespace

FindingGroups group_findings(const Report& report) {
  const size_t n = report.findings.size();
  FindingGroups groups;
  groups.id.assign(n, 0);
  groups.repeat.assign(n, false);
  groups.others.resize(n);
  std::unordered_map<std::string, size_t> first;
  uint32_t next_id = 0;
  for (size_t i = 0; i < n; ++i) {
    auto [at, fresh] = first.try_emplace(group_key(report, report.findings[i]), i);
    if (fresh) {
      groups.id[i] = ++next_id;
      continue;
    }
    groups.id[i] = groups.id[at->second];
    groups.repeat[i] = true;
    groups.others[at->second].push_back(i);
  }
  return groups;
}

}  // namespace capguard
