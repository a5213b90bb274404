// Identical findings: the same rule, user line, message shape (numbers and addresses aside),
// capture site (its user line) and test, in one process or across many (the ranks
// of a job that make one mistake); on a thread without a user frame, the thread's kind and the
// user line that started its work. The text and HTML reports print a group once ("on
// 64 of 64 ranks", "and N more times"); JSON and SARIF give the findings of a group one id, and
// JSON lists the groups with their ranks. One place, so that formats agree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/report.h"

namespace capguard {

struct FindingGroups {
  std::vector<uint32_t> id;                 // per finding: 1-based, numbered by first finding
  std::vector<bool> repeat;                 // an earlier finding of its group is printed
  std::vector<std::vector<size_t>> others;  // per group's first finding: its later findings
  std::vector<size_t> first;                // per group (id - 1): its first finding
  uint32_t ranks = 0;  // ranks_reported(report), counted once (once per group was
                       // 20,000 ranks times 20,000 groups)
};

FindingGroups group_findings(const Report& report);

// Where a group was found, across processes.
struct GroupScope {
  std::vector<size_t> processes;  // indexes into Report::processes, ascending, each once
  std::vector<uint32_t> ranks;    // the distinct ranks among them, ascending
  // The distinct ranks of the whole report (not the job's WORLD_SIZE: a rank's own report, or a
  // merge missing some, judges what it holds; the missing ones are the gate's), 0: none known.
  uint32_t world = 0;
  bool all_ranked = false;  // every process of the group has a rank
  // Some ranks of a job of several found it and others did not: a rank that diverged.
  bool diverged = false;
  // "on 64 of 64 ranks", "rank 1 only", "on ranks 3, 17 only (2 of 64 ranks)", "in 3
  // processes"; "" for a finding of one process of a job without ranks.
  std::string words;
};

// The scope of the group whose first finding is `first`.
GroupScope group_scope(const Report& report, const FindingGroups& groups, size_t first);

// The job's size as the report's processes name it: the largest WORLD_SIZE (or the like) any
// process saw, at least the distinct ranks. 0 when no process has a rank.
uint32_t world_size_of(const Report& report);
// The distinct ranks of the report's processes.
uint32_t ranks_reported(const Report& report);
// The ranks of 0..world_size_of(report)-1 that no process of the report names: ascending runs
// [first, last], never one rank at a time (a trace may claim WORLD_SIZE=4294967295).
struct RankRun {
  uint32_t first = 0, last = 0;
};
std::vector<RankRun> missing_ranks(const Report& report);
// How many ranks the runs hold; "3, 12, 20-4294967294": at most kRankRunsNamed runs, then how
// many more.
uint64_t rank_count(const std::vector<RankRun>& runs);
std::string rank_runs_list(const std::vector<RankRun>& runs);
inline constexpr size_t kRankRunsNamed = 32;
// Each rank that processes of two hosts claim (a process and its fork children share a host;
// two hosts cannot both be one rank): "rank 3 on hosts a and b", at most kRankRunsNamed lines.
std::vector<std::string> ranks_on_two_hosts(const Report& report);

// "0-3, 17": ascending ranks, runs shortened.
std::string rank_list(const std::vector<uint32_t>& ranks);

// The index into Report::processes of a finding's process, if it has one.
std::optional<size_t> process_index(const Report& report, const Finding& finding);

// "rank 3 (node a17, GPU 3)" for a finding's process, "" when its trace did not say.
std::string finding_who(const Report& report, const Finding& finding);

}  // namespace capguard
