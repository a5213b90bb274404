// sync-during-capture: a stream/device/context synchronize or query while work is captured.
#include <fmt/format.h>

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
    Accepts::FailedCalls};

}  // namespace capguard::rules
