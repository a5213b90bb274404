// relaxed-mode-unsafe-call: an unsafe call that succeeded only because of Relaxed mode or an
// exchanged thread mode; under the default Global mode it would invalidate the capture.
#include <fmt/format.h>

#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check(const Call& call, const CaptureModel& model, Draft& draft) {
  if (call.api.kind != ApiKind::Unsafe || call.result() != 0 || !call.victims.empty())
    return false;
  const uint32_t tid = call.ev->tid;
  const Capture* capture = call.own_capture && call.own_capture->valid() ? call.own_capture
                                                                           : nullptr;
  if (!capture) {
    if (!model.other_thread_has_global_capture(tid)) return false;
    for (const Capture* c : model.open_captures())
      if (c->tid != tid && c->mode == trace::CaptureMode::Global && c->valid()) capture = c;
  }
  draft.capture = capture;
  std::string why;
  if (call.thread && call.thread->mode != trace::CaptureMode::Global)
    why = fmt::format("this thread set its capture interaction mode to {}",
                      mode_name(call.thread->mode));
  else
    why = fmt::format("the capture was begun in {} mode", mode_name(capture->mode));
  draft.message = fmt::format(
      "{} during {} succeeded only because {}; in the default global mode it would invalidate "
      "the capture",
      call.ev->api, describe_capture(*capture), why);
  return true;
}

}  // namespace

extern const Rule kRelaxedModeUnsafeCall;
constinit const Rule kRelaxedModeUnsafeCall{
    {"relaxed-mode-unsafe-call", Severity::Note,
     "an unsafe call passed only because of Relaxed mode or an exchanged capture mode",
     "cudaMalloc and other potentially unsafe calls are allowed during a capture begun with\n"
     "cudaStreamCaptureModeRelaxed, or on a thread that called\n"
     "cudaThreadExchangeStreamCaptureMode. That is legal, but fragile: the allocation is not\n"
     "part of the graph, and the same code under the default Global mode invalidates the\n"
     "capture.\n"
     "\n"
     "    cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);\n"
     "    cudaMalloc(&p, n);                 // fine now, 900 under Global mode\n"
     "\n"
     "Fix: allocate before the capture or with cudaMallocAsync on the capturing stream.",
     "allocate before the capture, or with cudaMallocAsync on the capturing stream"},
    &check, nullptr};

}  // namespace capguard::rules
