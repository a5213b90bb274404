// escaped-legacy-work: async work on the legacy stream by a capturing thread while its
// non-blocking stream captures: accepted, run eagerly, not in the graph.
#include <fmt/format.h>

#include "rules/rehearsal.h"
#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check(const Call& call, const CaptureModel&, Draft& draft) {
  if (!is_stream_work(call.api.kind) || call.result() != 0 || !call.victims.empty()) return false;
  if (!call.stream_is_legacy()) return false;
  const Capture* capture = call.own_capture;
  if (!capture || !capture->valid()) return false;
  draft.capture = capture;
  draft.message = fmt::format(
      "{} on the legacy NULL stream while this thread records {} on a non-blocking stream: the "
      "work ran once, now, and is not part of the graph",
      call.ev->api, describe_capture(*capture));
  return true;
}

// Rehearsal: work on the legacy stream by the region's thread while it runs on a non-blocking
// stream.
bool rehearse(const RehearsalFacts& f, RehearsalWords& words) {
  if (f.other_thread || !f.origin_non_blocking || !escapes_to_legacy_stream(f)) return false;
  words = {"work on the legacy stream would run once, now, and be missing from the graph",
           "legacy stream"};
  return true;
}

}  // namespace

extern const Rule kEscapedLegacyWork;
constinit const Rule kEscapedLegacyWork{
    RuleId::kEscapedLegacyWork,
    {"A non-blocking stream does not synchronize with the legacy NULL stream, so while it\n"
     "captures, a kernel launched on stream 0 (or cudaMemcpyAsync(..., 0)) is accepted and runs\n"
     "immediately instead of being captured. The graph lacks it and replays skip it.\n"
     "PyTorch: `with torch.cuda.stream(torch.cuda.default_stream()):` inside torch.cuda.graph.\n"
     "\n"
     "    cudaStreamBeginCapture(s, ...);    // s is non-blocking\n"
     "    kernel<<<1, 1>>>();                // stream 0: runs now, not on replay\n"
     "\n"
     "Fix: pass the capturing stream (or a stream forked into the capture) to every launch.",
     "launch on the capturing stream instead of the default stream"},
    &check,
    nullptr,
    nullptr,
    Accepts::AnyCall,
    &rehearse,
    kind_bit(ApiKind::Enqueue) | kind_bit(ApiKind::GraphLaunch)};

}  // namespace capguard::rules
