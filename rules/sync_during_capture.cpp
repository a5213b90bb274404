// sync-during-capture: a stream/device/context synchronize or query while work is captured.
#include <fmt/format.h>

#include "rules/rehearsal.h"
#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check(const Call& call, const CaptureModel& model, Draft& draft) {
  ApiKind kind = call.api.kind;
  if (call.result() != kErrCaptureUnsupported) return false;
  if (kind != ApiKind::StreamSync && kind != ApiKind::DeviceSync) return false;
  const Capture* capture = capture_of(call);
  if (!capture) {
    std::vector<Capture*> prohibiting = model.prohibiting(call.ev->tid);
    if (!prohibiting.empty()) capture = prohibiting.front();
  }
  draft.capture = capture;
  std::string what = capture ? describe_capture(*capture) : std::string("a capture");
  if (kind == ApiKind::StreamSync && call.stream_capture) {
    what = describe_capture_short(*call.stream_capture);
    draft.message = fmt::format(
        "{} on {}, which is capturing ({}): captured work has not run, so there is nothing to "
        "wait for; CUDA returned {} and invalidated the capture",
        call.ev->api, describe_stream(call.stream), what, describe_result(call));
  } else if (capture && capture->tid != call.ev->tid) {
    draft.message = fmt::format(
        "{} on thread {} while thread {} records {}: in global mode a synchronize from any "
        "thread would wait on captured work; CUDA returned {} and invalidated the capture",
        call.ev->api, call.ev->tid, capture->tid, what, describe_result(call));
  } else {
    draft.message = fmt::format(
        "{} during {}: it would wait on captured work that has not run; CUDA returned {} and "
        "invalidated the capture",
        call.ev->api, what, describe_result(call));
  }
  return true;
}

// Rehearsal: a synchronize a capture of the region would make wait on work not yet run -- of a
// region stream, the legacy stream, or (before the region has a stream) any; the device from
// any thread in global mode.
bool rehearse(const RehearsalFacts& f, RehearsalWords& words) {
  const ApiKind kind = f.api.kind;
  const bool breaks = f.other_thread
                          ? kind == ApiKind::DeviceSync && f.mode == trace::CaptureMode::Global
                          : kind == ApiKind::DeviceSync ||
                                (kind == ApiKind::StreamSync &&
                                 (f.stream_in_region || f.stream_legacy || !f.region_has_streams));
  if (!breaks) return false;
  words = {
      "a capture would make it wait on captured work that has not run: CUDA would return "
      "cudaErrorStreamCaptureUnsupported and invalidate the capture",
      "synchronize"};
  return true;
}

}  // namespace

extern const Rule kSyncDuringCapture;
constinit const Rule kSyncDuringCapture{
    RuleId::kSyncDuringCapture,
    {"During stream capture nothing executes: kernels, copies and memsets become graph nodes.\n"
     "cudaStreamSynchronize/cudaStreamQuery on a capturing stream, and cudaDeviceSynchronize or\n"
     "cuCtxSynchronize while a capture is open, would wait for work that does not exist yet.\n"
     "CUDA rejects the call with cudaErrorStreamCaptureUnsupported (900) and invalidates the\n"
     "capture; every later call on its streams fails with 901.\n"
     "\n"
     "    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);\n"
     "    kernel<<<1, 1, 0, s>>>();\n"
     "    cudaStreamSynchronize(s);          // 900: the capture dies here\n"
     "    cudaStreamEndCapture(s, &graph);   // 901\n"
     "\n"
     "Fix: remove the synchronization from the captured region (synchronize after\n"
     "cudaGraphLaunch instead), or guard it with cudaStreamIsCapturing.",
     "move the synchronize out of the captured region (sync after launching the graph)"},
    &check,
    nullptr,
    nullptr,
    Accepts::FailedCalls,
    &rehearse};

}  // namespace capguard::rules
