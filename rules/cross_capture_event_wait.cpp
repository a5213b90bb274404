// cross-capture-event-wait: waiting on an event captured by a different capture (902).
#include <fmt/format.h>

#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check(const Call& call, const CaptureModel&, Draft& draft) {
  if (call.api.kind != ApiKind::StreamWaitEvent || call.result() != kErrCaptureMerge) return false;
  const Capture* waiting = call.stream_capture;
  const Capture* other = call.event_capture;
  draft.capture = waiting ? waiting : other;
  draft.message = fmt::format(
      "{}: {} ({}) waits on event {}, which was recorded in a different capture, {}; two "
      "captures cannot be merged, CUDA returned {} and invalidated both",
      call.ev->api, describe_stream(call.stream),
      waiting ? describe_capture_short(*waiting) : std::string("capturing"), hex(call.ev->event),
      other ? describe_capture(*other) : std::string("unknown"), describe_result(call));
  if (call.event && call.event->record.known)
    draft.related.push_back({"event-record",
                             fmt::format("event {} recorded here in {}", hex(call.ev->event),
                                         other ? describe_capture(*other) : "another capture"),
                             call.event->record});
  if (other && other != waiting) add_capture_begin(draft, *other, "other-capture-begin");
  return true;
}

}  // namespace

extern const Rule kCrossCaptureEventWait;
constinit const Rule kCrossCaptureEventWait{
    RuleId::kCrossCaptureEventWait,
    {"Events recorded during a capture belong to that capture's graph. When a stream that is\n"
     "part of one capture waits on an event recorded in another, CUDA cannot merge the two\n"
     "graphs: it returns cudaErrorStreamCaptureMerge (902) and invalidates both captures.\n"
     "\n"
     "    cudaStreamBeginCapture(a, ...);  cudaEventRecord(e, a);\n"
     "    cudaStreamBeginCapture(b, ...);\n"
     "    cudaStreamWaitEvent(b, e);         // 902: captures of a and b both die\n"
     "\n"
     "Fix: keep each capture's dependencies inside it; if the two must be ordered, capture them\n"
     "into one graph, or synchronize between the graph launches.",
     "do not wait on another capture's events; order the graphs at launch time instead"},
    &check,
    nullptr,
    nullptr,
    Accepts::FailedCalls};

}  // namespace capguard::rules
