// uncaptured-event-wait: a capturing stream waits on an event recorded outside capture (905).
#include <fmt/format.h>

#include "rules/rehearsal.h"
#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check(const Call& call, const CaptureModel&, Draft& draft) {
  if (call.api.kind != ApiKind::StreamWaitEvent || call.result() != kErrCaptureIsolation)
    return false;
  const Capture* capture = capture_of(call);
  draft.capture = capture;
  draft.message = fmt::format(
      "{}: {} ({}) waits on event {}, which was not recorded in the capture; a capture may "
      "only wait on outside events with cudaEventWaitExternal, so CUDA returned {} and "
      "invalidated the capture",
      call.ev->api, describe_stream(call.stream),
      capture ? describe_capture_short(*capture) : std::string("capturing"), hex(call.ev->event),
      describe_result(call));
  if (call.event && call.event->record.known)
    draft.related.push_back(
        {"event-record",
         fmt::format("event {} was last recorded here, in a capture that has ended",
                     hex(call.ev->event)),
         call.event->record});
  return true;
}

// Rehearsal: a region stream waits on an event recorded before the region, not externally.
bool rehearse(const RehearsalFacts& f, RehearsalWords& words) {
  if (f.other_thread || f.api.kind != ApiKind::StreamWaitEvent || !f.stream_in_region ||
      f.event_in_region || f.wait_external)
    return false;
  words = {
      "the event was recorded before the region: a capturing stream waiting on it makes "
      "CUDA return cudaErrorStreamCaptureIsolation (use cudaEventWaitExternal)",
      "event wait"};
  return true;
}

}  // namespace

extern const Rule kUncapturedEventWait;
constinit const Rule kUncapturedEventWait{
    RuleId::kUncapturedEventWait,
    {"Inside a capture, cudaStreamWaitEvent expresses a dependency between graph nodes. An event\n"
     "recorded outside the capture is not a node, so CUDA rejects the wait with\n"
     "cudaErrorStreamCaptureIsolation (905) and invalidates the capture - unless the wait is\n"
     "flagged cudaEventWaitExternal, which captures an event-wait node instead.\n"
     "\n"
     "    cudaEventRecord(e, other);         // outside the capture\n"
     "    cudaStreamBeginCapture(s, ...);\n"
     "    cudaStreamWaitEvent(s, e, 0);      // 905: the capture dies here\n"
     "\n"
     "Fix: wait before beginning the capture, or pass cudaEventWaitExternal if the graph should\n"
     "wait on the event each time it runs.",
     "wait before the capture, or pass cudaEventWaitExternal to capture an event-wait node"},
    &check,
    nullptr,
    nullptr,
    Accepts::FailedCalls,
    &rehearse};

}  // namespace capguard::rules
