#include "analyzer/report.h"

namespace capguard {

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
