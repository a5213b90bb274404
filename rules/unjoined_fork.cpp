// unjoined-fork: EndCapture finds a forked stream whose work never joined back (904).
#include <fmt/format.h>

#include "model/cuda_errors.h"
#include "rules/rehearsal.h"
#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check(const Call& call, const CaptureModel& model, Draft& draft) {
  if (call.api.kind != ApiKind::EndCapture || call.result() != kErrCaptureUnjoined) return false;
  const Capture* capture = capture_of(call);
  draft.capture = capture;
  std::vector<const Member*> unjoined;
  if (capture) unjoined = model.unjoined_members(*capture);
  std::string names;
  std::string failed_joins;
  for (const Member* m : unjoined) {
    names += (names.empty() ? "" : ", ") + describe_stream(m->stream);
    if (m->fork_wait.known)
      draft.related.push_back(
          {"fork",
           fmt::format("{} joined the capture here ({})", describe_stream(m->stream),
                       m->fork_event ? "waiting on event " + hex(m->fork_event)
                                     : std::string("seen capturing")),
           m->fork_wait});
    if (m->fork_record.known)
      draft.related.push_back({"event-record",
                               fmt::format("event {} that forked {} was recorded here",
                                           hex(m->fork_event), describe_stream(m->stream)),
                               m->fork_record});
    if (m->failed_record.known) {
      // The join was written but its record failed, so the origin's wait joined nothing.
      failed_joins += fmt::format(
          "; the event record meant to join {} failed with {}{}", describe_stream(m->stream),
          result_name(m->failed_record_result, m->failed_record_domain),
          m->failed_record_result == kErrInvalidResourceHandle
              ? " (the event belongs to another device than the stream)"
              : "");
      draft.related.push_back(
          {"join-record-failed",
           fmt::format("{} on {} returned {} ({}), so the origin's wait joined nothing",
                       m->failed_record.api, describe_stream(m->stream),
                       result_name(m->failed_record_result, m->failed_record_domain),
                       m->failed_record_result),
           m->failed_record});
    }
    if (m->last_work.known)
      draft.related.push_back(
          {"last-work",
           fmt::format("last work on {} ({}), never joined back into the origin stream",
                       describe_stream(m->stream), m->last_work.api),
           m->last_work});
  }
  std::string what = capture ? describe_capture(*capture) : std::string("the capture");
  if (names.empty()) {
    draft.message = fmt::format(
        "{} on {}: a stream forked into {} was not joined back into the origin stream; CUDA "
        "returned {} and produced no graph",
        call.ev->api, describe_stream(call.stream), what, describe_result(call));
  } else {
    draft.message = fmt::format(
        "{} on {}: {} {} forked into {} but {} last work was never joined back into the origin "
        "stream{}; CUDA returned {} and produced no graph",
        call.ev->api, describe_stream(call.stream), names, unjoined.size() == 1 ? "was" : "were",
        what, unjoined.size() == 1 ? "its" : "their", failed_joins, describe_result(call));
  }
  return true;
}

// Rehearsal: at the region's end, a stream forked into it whose last work the origin never
// waited for.
bool rehearse(const RehearsalFacts& f, RehearsalWords& words) {
  if (!f.unjoined_fork) return false;
  words = {
      "the region's first stream never waited for this stream's last work: "
      "cudaStreamEndCapture would return cudaErrorStreamCaptureUnjoined",
      "unjoined stream"};
  return true;
}

}  // namespace

extern const Rule kUnjoinedFork;
constinit const Rule kUnjoinedFork{
    RuleId::kUnjoinedFork,
    {"A capture spreads to another stream when that stream waits on an event recorded in the\n"
     "capture (a fork). Everything such a stream enqueues must flow back into the origin stream\n"
     "(an event recorded on the forked stream, waited on by the origin) before\n"
     "cudaStreamEndCapture; otherwise CUDA returns cudaErrorStreamCaptureUnjoined (904) and no\n"
     "graph.\n"
     "\n"
     "    cudaEventRecord(fork, s);  cudaStreamWaitEvent(s2, fork);      // s2 joins\n"
     "    kernel<<<1, 1, 0, s2>>>();\n"
     "    cudaStreamEndCapture(s, &graph);   // 904: s2's kernel never joined back\n"
     "\n"
     "Fix: after the side stream's last work, cudaEventRecord(join, s2) and\n"
     "cudaStreamWaitEvent(s, join) before ending the capture.",
     "record an event on the forked stream after its last work and wait on it from the origin"},
    &check,
    nullptr,
    nullptr,
    Accepts::FailedCalls,
    &rehearse};

}  // namespace capguard::rules
