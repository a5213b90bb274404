// legacy-stream-during-capture: the legacy NULL stream meets a capturing blocking stream, or a
// capture is begun on the legacy stream.
#include <fmt/format.h>

#include "rules/rehearsal.h"
#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check(const Call& call, const CaptureModel&, Draft& draft) {
  bool begin_on_legacy = call.api.kind == ApiKind::BeginCapture &&
                         call.result() == kErrCaptureUnsupported && call.stream_is_legacy();
  if (call.result() != kErrCaptureImplicit && !begin_on_legacy) return false;
  if (begin_on_legacy) {
    draft.message = fmt::format(
        "{} on the legacy NULL stream: the legacy stream cannot be captured; CUDA returned {} "
        "and no capture began",
        call.ev->api, describe_result(call));
    return true;
  }
  const Capture* capture = capture_of(call);
  if (!capture) capture = call.own_capture;
  draft.capture = capture;
  std::string victim = capture ? describe_capture(*capture) : std::string("a blocking stream");
  if (call.api.kind == ApiKind::SyncCopy) {
    draft.message = fmt::format(
        "{} is synchronous and runs on the legacy NULL stream, which implicitly synchronizes "
        "with every blocking stream; {} was capturing on a blocking stream, so CUDA returned {} "
        "and invalidated it",
        call.ev->api, victim, describe_result(call));
  } else {
    draft.message = fmt::format(
        "{} on the legacy NULL stream while {} was capturing on a blocking stream: the legacy "
        "stream implicitly synchronizes with blocking streams; CUDA returned {} and invalidated "
        "the capture",
        call.ev->api, victim, describe_result(call));
  }
  return true;
}

// Rehearsal: the region runs on a blocking stream, and its thread copies synchronously or puts
// work on the legacy stream (not the region's): CUDA would answer 906.
bool rehearse(const RehearsalFacts& f, RehearsalWords& words) {
  if (f.other_thread || f.origin_non_blocking) return false;
  if (f.api.kind != ApiKind::SyncCopy && !escapes_to_legacy_stream(f)) return false;
  words = {
      "the legacy stream synchronizes with a blocking capturing stream: CUDA would "
      "return cudaErrorStreamCaptureImplicit and invalidate the capture",
      f.api.kind == ApiKind::SyncCopy ? "host copy" : "legacy stream"};
  return true;
}

}  // namespace

extern const Rule kLegacyStreamDuringCapture;
constinit const Rule kLegacyStreamDuringCapture{
    RuleId::kLegacyStreamDuringCapture,
    {"The legacy default stream (stream 0 without per-thread default streams, cudaStreamLegacy)\n"
     "implicitly synchronizes with every blocking stream. While a stream created without\n"
     "cudaStreamNonBlocking captures, any use of the legacy stream - a kernel or async copy on\n"
     "stream 0, a synchronous cudaMemcpy/cudaMemset, cuMemcpyHtoD, cudaStreamQuery(0) - would\n"
     "join the capture implicitly: CUDA returns cudaErrorStreamCaptureImplicit (906) and\n"
     "invalidates it. Beginning a capture on the legacy stream itself fails with 900.\n"
     "\n"
     "    cudaStreamCreate(&s);              // blocking\n"
     "    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);\n"
     "    kernel<<<1, 1>>>();                // stream 0: 906, the capture dies here\n"
     "\n"
     "Fix: pass the capturing stream explicitly to every launch, copy and memset (use the Async\n"
     "variants), and capture on a stream created with cudaStreamNonBlocking.",
     "put the work on the capturing stream (async variants, explicit stream argument)"},
    &check,
    nullptr,
    nullptr,
    Accepts::FailedCalls,
    &rehearse};

}  // namespace capguard::rules
