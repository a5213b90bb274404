// Identical findings: the same rule, process, user line and capture site (and test, under the
// pytest plugin); on a thread without a user frame, the thread's kind and the user line that
// started its work. The text report prints a group once ("and N more times"); JSON and SARIF keep
// each finding and give the findings of a group one id. One place, so that formats agree.
#pragma once

#include <cstdint>
#include <vector>

#include "model/report.h"

namespace capguard {

struct FindingGroups {
  std::vector<uint32_t> id;                 // per finding: 1-based, numbered by first finding
  std::vector<bool> repeat;                 // an earlier finding of its group is printed
  std::vector<std::vector<size_t>> others;  // per group's first finding: its later findings
};

FindingGroups group_findings(const Report& report);

}  // namespace capguard
