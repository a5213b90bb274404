// capture-never-ended: a thread or the process ended with a capture still open.
#include <fmt/format.h>

#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check_open(const Capture& capture, bool thread_exited, Draft& draft) {
  if (capture.status != CaptureState::Open) return false;  // a dead capture has its own finding
  draft.capture = &capture;
  draft.message = fmt::format(
      "{} was begun by thread {} and never ended: the {} with the capture open, so no graph was "
      "produced",
      describe_capture(capture), capture.tid, thread_exited ? "thread exited" : "process ended");
  return true;
}

}  // namespace

extern const Rule kCaptureNeverEnded;
constinit const Rule kCaptureNeverEnded{
    RuleId::kCaptureNeverEnded,
    {"A capture that is never ended produces no graph, and the stream stays in capture mode:\n"
     "every later use of it by other code fails or is captured into nothing. Typically an\n"
     "early return or an exception between cudaStreamBeginCapture and cudaStreamEndCapture.\n"
     "\n"
     "    cudaStreamBeginCapture(s, ...);\n"
     "    if (err) return;                   // capture left open\n"
     "\n"
     "Fix: end the capture on every path (an RAII guard that calls cudaStreamEndCapture).",
     "end the capture on every path, e.g. with an RAII guard"},
    nullptr,
    &check_open};

}  // namespace capguard::rules
