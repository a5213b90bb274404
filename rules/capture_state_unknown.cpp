// capture-state-unknown: a capture the model believed open was over by a later call, and the
// model never saw it end: said once, at the call that showed it, instead of holding
// every later call of its thread against a capture that no longer existed.
#include <fmt/format.h>

#include "rules/rule.h"

namespace capguard::rules {
namespace {

// How the call showed the capture over, in words (CaptureModel::shows_over and prepare()).
std::string how_shown(const Call& call, const Capture& capture) {
  const trace::ApiEvent& ev = *call.ev;
  const std::string stream = describe_stream(capture.origin);
  switch (call.api.kind) {
    case ApiKind::StreamSync:
      return fmt::format("{} on {} succeeded, which CUDA refuses on a capturing stream", ev.api,
                         describe_stream(call.stream));
    case ApiKind::EventSync:
      return fmt::format(
          "{} of an event recorded in it succeeded, which CUDA refuses while the capture lasts",
          ev.api);
    case ApiKind::BeginCapture:
      return fmt::format("{} began a new capture on {}", ev.api, describe_stream(call.stream));
    default:
      break;
  }
  if (ev.has(trace::Field::CaptureId) && ev.capture_id != 0 && capture.cuda_id != 0 &&
      ev.capture_id != capture.cuda_id)
    return fmt::format("CUDA said at {} that {} was in another capture", ev.api,
                       describe_stream(call.stream));
  return fmt::format("CUDA said at {} that {} was not capturing", ev.api,
                     describe_stream(call.has_stream ? call.stream : capture.origin));
}

bool check_call(const Call& call, const CaptureModel& /*model*/, Draft& draft) {
  if (call.found_over == nullptr) return false;
  const Capture& capture = *call.found_over;
  draft.capture = &capture;
  draft.message = fmt::format(
      "{} was still open as far as capguard saw, but {}: it ended where capguard could not see "
      "(a library's own call, a path CUPTI did not report), so its state after its last known "
      "call ({}) is unknown, and later calls are not judged against it",
      describe_capture(capture), how_shown(call, capture), describe_site(capture.last_known));
  add_capture_begin(draft, capture);
  if (capture.last_known.known && capture.last_known.seq != capture.begin.seq)
    draft.related.push_back(
        {"last-known", "the capture's last call capguard saw", capture.last_known});
  return true;
}

}  // namespace

extern const Rule kCaptureStateUnknown;
constinit const Rule kCaptureStateUnknown{
    RuleId::kCaptureStateUnknown,  // its rules/rules.def row: id, severity, summary
    {"capguard follows a capture from its BeginCapture to the EndCapture on its origin stream,\n"
     "and ends it too where CUDA does without one: the origin stream or its context destroyed,\n"
     "an EndCapture that failed, a new BeginCapture on its stream. When a later call shows that a capture it\n"
     "still believes open was over (CUDA says its stream is not capturing, or in another\n"
     "capture; a synchronize of its stream or of an event recorded in it succeeds, which CUDA\n"
     "refuses during a capture), its end happened where capguard could not see: a library's\n"
     "own call, a path CUPTI did not report. capguard says so once, at that call, and judges\n"
     "later calls without the capture; whether it made a graph, and what that graph holds\n"
     "after the capture's last call capguard saw, is unknown.\n"
     "\n"
     "    cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);\n"
     "    library_that_ends_the_capture(s);  // its EndCapture not seen\n"
     "    cudaStreamSynchronize(s);          // succeeds: s no longer captures\n"
     "\n"
     "Nothing to fix in the program when the capture was ended on purpose; if not, end it on\n"
     "every path from the code that began it.",
     "nothing, if the capture was ended on purpose; else end it from the code that began it"},
    &check_call,
    nullptr,  // on_open
    nullptr,  // on_graph
    Accepts::AnyCall,
    nullptr};  // a rehearsal has no capture to lose

}  // namespace capguard::rules
