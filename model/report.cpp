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

const char* to_string(Severity s) {
  switch (s) {
    case Severity::Note:
      return "note";
    case Severity::Warning:
      return "warning";
    case Severity::Error:
      return "error";
  }
  return "error";
}

const char* to_string(CaptureState s) {
  switch (s) {
    case CaptureState::Ok:
      return "ok";
    case CaptureState::Invalidated:
      return "invalidated";
    case CaptureState::Failed:
      return "failed";
    case CaptureState::Open:
      return "open";
  }
  return "open";
}

}  // namespace capguard
