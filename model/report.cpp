#include "model/report.h"

namespace capguard {

bool belongs_to(const Report& report, size_t index, uint32_t process, uint32_t pid) {
  if (process != 0) return process == index + 1;
  return index < report.processes.size() && report.processes[index].pid == pid;
}

ProcessOwners::ProcessOwners(const Report& report) : processes_(report.processes.size()) {
  for (size_t i = 0; i < report.processes.size(); ++i)
    by_pid_[report.processes[i].pid].push_back(i);
}

}  // namespace capguard
