// capture-invalidated: a capture died and no other rule explains why. Tried last.
#include <fmt/format.h>

#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check(const Call& call, const CaptureModel&, Draft& draft) {
  bool first_901 = call.result() == kErrCaptureInvalidated;
  if (call.victims.empty() && !first_901) return false;
  const Capture* capture = capture_of(call);
  draft.capture = capture;
  std::string what = capture ? describe_capture(*capture) : std::string("a capture");
  if (first_901) {
    draft.message = fmt::format(
        "{}{} failed with {}: {} had already been invalidated, and the trace shows no call that "
        "explains it (the culprit may predate tracing or be a call capguard does not know)",
        call.ev->api, call.has_stream ? " on " + describe_stream(call.stream) : std::string(),
        describe_result(call), what);
  } else {
    draft.message = fmt::format(
        "{}{} returned {} and left {} invalidated; no rule knows this call, but every later "
        "call on the capture fails because of it",
        call.ev->api, call.has_stream ? " on " + describe_stream(call.stream) : std::string(),
        describe_result(call), what);
  }
  return true;
}

}  // namespace

extern const Rule kCaptureInvalidated;
constinit const Rule kCaptureInvalidated{
    RuleId::kCaptureInvalidated,
    {"CUDA invalidated a capture, but the call that did it matches no known mistake (or happened\n"
     "before tracing began). capguard reports the first sign of the invalidation it saw, with\n"
     "the capture and everything else it knows, rather than staying silent; later failures of\n"
     "the same capture are folded under this finding.\n"
     "\n"
     "Fix: look at the calls on the capture's streams just before this one; run with the\n"
     "trace kept (--trace-dir) and report the sequence so that a rule can be written for it.",
     "inspect the calls just before this one on the capture's streams"},
    &check,
    nullptr,
    nullptr,
    Accepts::FailedCalls};

}  // namespace capguard::rules
