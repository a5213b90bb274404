// captured-event-query: cudaEventQuery/cudaEventSynchronize on an event recorded in a capture.
#include <fmt/format.h>

#include "rules/rehearsal.h"
#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check(const Call& call, const CaptureModel&, Draft& draft) {
  if (call.api.kind != ApiKind::EventSync || call.result() != kErrCapturedEvent) return false;
  const Capture* capture = call.event_capture ? call.event_capture : capture_of(call);
  draft.capture = capture;
  draft.message = fmt::format(
      "{} on event {}, which was recorded in {}: a captured event marks a point in the graph, "
      "not in time, so it cannot be queried or waited on by the host; CUDA returned {} and "
      "invalidated the capture",
      call.ev->api, hex(call.ev->event),
      capture ? describe_capture(*capture) : std::string("a capture"), describe_result(call));
  if (call.event && call.event->record.known)
    draft.related.push_back(
        {"event-record", fmt::format("event {} recorded in the capture here", hex(call.ev->event)),
         call.event->record});
  return true;
}

// Rehearsal: the region's thread queries or waits for an event recorded in the region.
bool rehearse(const RehearsalFacts& f, RehearsalWords& words) {
  if (f.other_thread || f.api.kind != ApiKind::EventSync || f.has_stream || !f.event_in_region)
    return false;
  words = {
      "the event would be recorded inside the capture: CUDA would return "
      "cudaErrorCapturedEvent and invalidate the capture",
      "synchronize"};
  return true;
}

}  // namespace

extern const Rule kCapturedEventQuery;
constinit const Rule kCapturedEventQuery{
    RuleId::kCapturedEventQuery,
    {"An event recorded on a capturing stream becomes a dependency inside the graph; it never\n"
     "completes on the host. cudaEventQuery on it returns cudaErrorCapturedEvent (907) and\n"
     "invalidates the capture (cudaEventSynchronize afterwards fails too).\n"
     "\n"
     "    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);\n"
     "    kernel<<<1, 1, 0, s>>>();\n"
     "    cudaEventRecord(e, s);\n"
     "    cudaEventQuery(e);                 // 907: the capture dies here\n"
     "\n"
     "Fix: use the event only for stream-to-stream dependencies inside the capture\n"
     "(cudaStreamWaitEvent); query or synchronize on it after launching the graph.",
     "do not query/synchronize captured events; wait on them with cudaStreamWaitEvent instead"},
    &check,
    nullptr,
    nullptr,
    Accepts::FailedCalls,
    &rehearse};

}  // namespace capguard::rules
