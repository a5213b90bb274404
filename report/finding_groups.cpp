#include "report/finding_groups.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

namespace capguard {
namespace {

// The message with its numbers (addresses, pids, thread and capture ids, counts) replaced by
// '#': what two ranks' findings at one line share.
std::string message_shape(std::string_view message) {
  std::string shape;
  shape.reserve(message.size());
  for (size_t i = 0; i < message.size(); ++i) {
    const char c = message[i];
    if (c == '0' && i + 1 < message.size() && message[i + 1] == 'x') {
      ++i;
      while (i + 1 < message.size() && std::isxdigit(static_cast<unsigned char>(message[i + 1])))
        ++i;
      shape += '#';
    } else if (c >= '0' && c <= '9') {
      while (i + 1 < message.size() && message[i + 1] >= '0' && message[i + 1] <= '9') ++i;
      shape += '#';
    } else {
      shape += c;
    }
  }
  return shape;
}

// A stack's place in the program: its user line when it has one, else its id in one process's
// trace (which another process's id says nothing about).
std::string site_key(const Location& location, const Finding& f) {
  if (const Frame* user = location.user()) return user_line_key(*user);
  return fmt::format("#{} in {}/{}", location.stack_id, f.process, f.pid);
}

// Where a finding is: its stack's place, except on a thread with no user frame, where twins are
// the findings of one rule on that kind of thread for work one user line started (the
// autograd thread's cuBLAS set-up, its 3 cudaMalloc calls), in one process or across ranks.
std::string finding_site_key(const Finding& f) {
  if (f.location.user() == nullptr)
    for (auto related = f.related.rbegin(); related != f.related.rend(); ++related)
      if (const Frame* start = related->location.user(); start && related->role == "started-by")
        return fmt::format("{} started at {}", f.thread_name, user_line_key(*start));
  return site_key(f.location, f);
}

std::string group_key(const Report& report, const Finding& f) {
  const CaptureInfo* capture = report.find_capture(f.capture);
  return fmt::format("{}\n{}\n{}\n{}\n{}", f.rule, finding_site_key(f),
                     capture != nullptr ? site_key(capture->begin, f) : std::string("-"), f.test,
                     message_shape(f.message));
}

}  // namespace

FindingGroups group_findings(const Report& report) {
  const size_t n = report.findings.size();
  FindingGroups groups;
  groups.ranks = ranks_reported(report);
  groups.id.assign(n, 0);
  groups.repeat.assign(n, false);
  groups.others.resize(n);
  std::unordered_map<std::string, size_t> first;
  uint32_t next_id = 0;
  for (size_t i = 0; i < n; ++i) {
    auto [at, fresh] = first.try_emplace(group_key(report, report.findings[i]), i);
    if (fresh) {
      groups.id[i] = ++next_id;
      groups.first.push_back(i);
      continue;
    }
    groups.id[i] = groups.id[at->second];
    groups.repeat[i] = true;
    groups.others[at->second].push_back(i);
  }
  return groups;
}

std::optional<size_t> process_index(const Report& report, const Finding& finding) {
  if (finding.process != 0 && finding.process <= report.processes.size())
    return finding.process - 1;
  for (size_t i = 0; i < report.processes.size(); ++i)
    if (report.processes[i].pid == finding.pid) return i;
  return std::nullopt;
}

std::string finding_who(const Report& report, const Finding& finding) {
  const auto index = process_index(report, finding);
  if (!index || !report.processes[*index].who) return {};
  return who_label(*report.processes[*index].who);
}

uint32_t world_size_of(const Report& report) {
  uint32_t world = 0;
  std::set<uint32_t> ranks;
  for (const ProcessInfo& p : report.processes) {
    if (!p.who || !p.who->rank) continue;
    ranks.insert(*p.who->rank);
    if (p.who->world_size) world = std::max(world, *p.who->world_size);
  }
  if (!ranks.empty())
    world = std::max({world, static_cast<uint32_t>(ranks.size()), *ranks.rbegin() + 1});
  return world;
}

uint32_t ranks_reported(const Report& report) {
  std::set<uint32_t> ranks;
  for (const ProcessInfo& p : report.processes)
    if (p.who && p.who->rank) ranks.insert(*p.who->rank);
  return static_cast<uint32_t>(ranks.size());
}

std::vector<RankRun> missing_ranks(const Report& report) {
  const uint32_t world = world_size_of(report);
  std::set<uint32_t> seen;
  for (const ProcessInfo& p : report.processes)
    if (p.who && p.who->rank && *p.who->rank < world) seen.insert(*p.who->rank);
  std::vector<RankRun> missing;
  uint64_t next = 0;  // the first rank not yet accounted for
  for (uint32_t rank : seen) {
    if (rank > next) missing.push_back({static_cast<uint32_t>(next), rank - 1});
    next = uint64_t{rank} + 1;
  }
  if (next < world) missing.push_back({static_cast<uint32_t>(next), world - 1});
  return missing;
}

uint64_t rank_count(const std::vector<RankRun>& runs) {
  uint64_t n = 0;
  for (const RankRun& run : runs) n += uint64_t{run.last} - run.first + 1;
  return n;
}

std::string rank_runs_list(const std::vector<RankRun>& runs) {
  std::string out;
  for (size_t i = 0; i < runs.size() && i < kRankRunsNamed; ++i) {
    const RankRun& run = runs[i];
    out += out.empty() ? "" : ", ";
    out += run.first == run.last ? std::to_string(run.first)
                                 : fmt::format("{}{}{}", run.first,
                                               run.last == run.first + 1 ? ", " : "-", run.last);
  }
  if (runs.size() > kRankRunsNamed)
    out += fmt::format(" and {} more runs of ranks", runs.size() - kRankRunsNamed);
  return out;
}

std::vector<std::string> ranks_on_two_hosts(const Report& report) {
  std::map<uint32_t, std::set<std::string>> hosts;  // bounded by the processes
  for (const ProcessInfo& p : report.processes)
    if (p.who && p.who->rank) hosts[*p.who->rank].insert(p.who->host);
  std::vector<std::string> lines;
  for (const auto& [rank, names] : hosts) {
    if (names.size() < 2) continue;
    if (lines.size() == kRankRunsNamed) {
      lines.push_back("and more ranks claimed by processes of two hosts");
      break;
    }
    lines.push_back(fmt::format("rank {} is claimed by processes of hosts {} and {}", rank,
                                *names.begin(), *std::next(names.begin())));
  }
  return lines;
}

std::string rank_list(const std::vector<uint32_t>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += out.empty() ? "" : ", ";
    out += j == i ? std::to_string(ranks[i])
                  : fmt::format("{}{}{}", ranks[i], j == i + 1 ? ", " : "-", ranks[j]);
    i = j + 1;
  }
  return out;
}

GroupScope group_scope(const Report& report, const FindingGroups& groups, size_t first) {
  GroupScope scope;
  std::set<size_t> processes;
  const auto add = [&](size_t f) {
    if (const auto index = process_index(report, report.findings[f])) processes.insert(*index);
  };
  add(first);
  for (size_t f : groups.others[first]) add(f);
  scope.processes.assign(processes.begin(), processes.end());
  std::set<uint32_t> ranks;
  scope.all_ranked = !scope.processes.empty();
  for (size_t p : scope.processes) {
    const auto& who = report.processes[p].who;
    if (who && who->rank)
      ranks.insert(*who->rank);
    else
      scope.all_ranked = false;
  }
  scope.ranks.assign(ranks.begin(), ranks.end());
  scope.world = groups.ranks;
  const size_t n = scope.ranks.size();
  if (scope.all_ranked && scope.world > 1) {
    scope.diverged = n < scope.world;
    if (!scope.diverged)
      scope.words = fmt::format("on {} of {} ranks", n, scope.world);
    else if (n == 1)
      scope.words = fmt::format("rank {} only ({} of {} ranks)", scope.ranks[0], n, scope.world);
    else
      scope.words =
          fmt::format("on ranks {} only ({} of {} ranks)", rank_list(scope.ranks), n, scope.world);
  } else if (scope.processes.size() > 1) {
    scope.words = fmt::format("in {} processes", scope.processes.size());
  }
  return scope;
}

}  // namespace capguard
