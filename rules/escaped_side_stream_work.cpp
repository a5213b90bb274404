// escaped-side-stream-work: a capturing thread enqueues on a stream outside its capture.
#include <fmt/format.h>

#include "rules/rehearsal.h"
#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check(const Call& call, const CaptureModel&, Draft& draft) {
  if (!is_stream_work(call.api.kind) || call.result() != 0 || !call.victims.empty()) return false;
  if (!call.has_stream || call.stream_is_legacy() || call.stream_capture) return false;
  const trace::ApiEvent& ev = *call.ev;
  // CUDA said this stream was capturing (into a capture the model does not know): not escaped.
  if (ev.has(trace::Field::StatusAfter) && ev.status_after != trace::CaptureStatus::None)
    return false;
  const Capture* capture = call.own_capture;
  if (!capture || !capture->valid()) return false;
  draft.capture = capture;
  draft.message = fmt::format(
      "{} on {}, which is not part of {} that this thread is recording: the work ran once, now, "
      "and is not in the graph",
      ev.api, describe_stream(call.stream), describe_capture(*capture));
  return true;
}

// Rehearsal: the region's thread puts work on a stream never forked into the region.
bool rehearse(const RehearsalFacts& f, RehearsalWords& words) {
  if (f.other_thread || !f.has_stream || f.stream_in_region) return false;
  if (f.api.kind != ApiKind::Enqueue && f.api.kind != ApiKind::GraphLaunch) return false;
  if (escapes_to_legacy_stream(f)) return false;  // the legacy stream's rules
  words = {
      "the stream was never forked into the region (no event recorded in it was waited "
      "on): this work would run once, now, and be missing from the graph",
      "stream not forked in"};
  return true;
}

}  // namespace

extern const Rule kEscapedSideStreamWork;
constinit const Rule kEscapedSideStreamWork{
    RuleId::kEscapedSideStreamWork,
    {"A stream becomes part of a capture only by beginning it or by waiting on an event recorded\n"
     "in it. Work that the capturing thread enqueues on any other stream is executed\n"
     "immediately and is missing from the graph - usually a forgotten fork.\n"
     "\n"
     "    cudaStreamBeginCapture(s, ...);\n"
     "    kernel<<<1, 1, 0, s2>>>();         // s2 never joined: runs now, not on replay\n"
     "\n"
     "Fix: fork the side stream into the capture first (cudaEventRecord(e, s);\n"
     "cudaStreamWaitEvent(s2, e)) and join it back before cudaStreamEndCapture.",
     "fork the stream into the capture (record on the origin, wait on the side stream)"},
    &check,
    nullptr,
    nullptr,
    Accepts::AnyCall,
    &rehearse,
    kind_bit(ApiKind::Enqueue) | kind_bit(ApiKind::GraphLaunch)};

}  // namespace capguard::rules
