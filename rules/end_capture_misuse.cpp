// end-capture-misuse: EndCapture on a non-origin stream (903), from the wrong thread (908), on
// a stream that is not capturing (401); BeginCapture on a stream already capturing (401).
#include <fmt/format.h>

#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check_end(const Call& call, Draft& draft) {
  // Every EndCapture comes here, nearly all of them successful: nothing is worded for those.
  const int result = call.result();
  if (result != kErrCaptureUnmatched && result != kErrCaptureWrongThread &&
      result != kErrIllegalState)
    return false;
  const Capture* capture = capture_of(call);
  draft.capture = capture;
  std::string what = capture ? describe_capture(*capture) : std::string("its capture");
  switch (result) {
    case kErrCaptureUnmatched:
      draft.message = fmt::format(
          "{} on {}, which joined {} but is not its origin: only the stream that began a "
          "capture may end it; CUDA returned {} and invalidated the capture",
          call.ev->api, describe_stream(call.stream), what, describe_result(call));
      return true;
    case kErrCaptureWrongThread:
      draft.message = fmt::format(
          "{} on thread {} for {}, begun by thread {}: in {} mode only the beginning thread may "
          "end a capture; CUDA returned {} and terminated the capture",
          call.ev->api, call.ev->tid, what, capture ? capture->tid : 0,
          mode_name(capture ? capture->mode : trace::CaptureMode::Global), describe_result(call));
      return true;
    case kErrIllegalState:
      draft.message = fmt::format(
          "{} on {}, which is not capturing: there is no capture to end; CUDA returned {}",
          call.ev->api, describe_stream(call.stream), describe_result(call));
      return true;
    default:
      return false;
  }
}

bool check(const Call& call, const CaptureModel&, Draft& draft) {
  if (call.api.kind == ApiKind::EndCapture) return check_end(call, draft);
  if (call.api.kind != ApiKind::BeginCapture || call.result() != kErrIllegalState) return false;
  const Capture* capture = call.stream_capture;
  draft.capture = capture;
  draft.message = fmt::format(
      "{} on {}, which is already capturing{}: a stream captures one sequence at a time; CUDA "
      "returned {} and the first capture continues",
      call.ev->api, describe_stream(call.stream),
      capture ? " (" + describe_capture_short(*capture) + ")" : std::string(),
      describe_result(call));
  return true;
}

}  // namespace

extern const Rule kEndCaptureMisuse;
constinit const Rule kEndCaptureMisuse{
    RuleId::kEndCaptureMisuse,
    {"A capture is ended by cudaStreamEndCapture on the stream that began it:\n"
     "  - on a forked (non-origin) stream: cudaErrorStreamCaptureUnmatched (903), the capture is\n"
     "    invalidated and the origin's EndCapture later fails with 901;\n"
     "  - from another thread in Global/ThreadLocal mode: cudaErrorStreamCaptureWrongThread\n"
     "    (908); the capture is terminated, and the origin thread's own EndCapture then fails\n"
     "    with cudaErrorIllegalState (401);\n"
     "  - on a stream that is not capturing, or BeginCapture on a stream already capturing:\n"
     "    cudaErrorIllegalState (401).\n"
     "\n"
     "    cudaStreamBeginCapture(s, ...);  /* fork s2 from s */\n"
     "    cudaStreamEndCapture(s2, &graph);  // 903\n"
     "\n"
     "Fix: end each capture exactly once, on its origin stream, from the thread that began it\n"
     "(or begin it in Relaxed mode if another thread must end it).",
     "end the capture once, on the stream and thread that began it"},
    &check,
    nullptr,
    nullptr,
    Accepts::FailedCalls};

}  // namespace capguard::rules
