// relaxed-mode-unsafe-call: an unsafe call that succeeded only because of Relaxed mode or an
// exchanged thread mode; under the default Global mode it would invalidate the capture.
#include <fmt/format.h>

#include "rules/rehearsal.h"
#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check(const Call& call, const CaptureModel& model, Draft& draft) {
  if (call.api.kind != ApiKind::Unsafe || call.result() != 0 || !call.victims.empty()) return false;
  const uint32_t tid = call.ev->tid;
  const trace::CaptureMode thread_mode =
      call.thread ? call.thread->mode : trace::CaptureMode::Global;
  const Capture* capture = nullptr;
  std::string why;
  if (call.own_capture && call.own_capture->valid()) {
    capture = call.own_capture;
    if (thread_mode == trace::CaptureMode::Relaxed)
      why = "this thread set its capture interaction mode to relaxed";
    else if (capture->mode == trace::CaptureMode::Relaxed)
      why = "the capture was begun in relaxed mode";
  } else {
    for (const Capture* c : model.open_captures())
      if (c->tid != tid && c->mode == trace::CaptureMode::Global && c->valid()) capture = c;
    if (capture && thread_mode != trace::CaptureMode::Global)
      why =
          fmt::format("this thread set its capture interaction mode to {}", mode_name(thread_mode));
  }
  // No reason the model can see: CUDA knows better (e.g. an untraced mode exchange).
  if (!capture || why.empty()) return false;
  draft.capture = capture;
  draft.message = fmt::format(
      "{} during {} succeeded only because {}; in the default global mode it would invalidate "
      "the capture",
      call.ev->api, describe_capture(*capture), why);
  return true;
}

// Rehearsal: the region's own unsafe call, allowed only because the region is rehearsed in
// relaxed mode.
bool rehearse(const RehearsalFacts& f, RehearsalWords& words) {
  if (f.other_thread || f.api.kind != ApiKind::Unsafe || f.mode != trace::CaptureMode::Relaxed)
    return false;
  words = {
      "allowed only because the capture would be in relaxed mode; global or thread_local "
      "mode would invalidate it",
      "allocation or pinning"};
  return true;
}

}  // namespace

extern const Rule kRelaxedModeUnsafeCall;
constinit const Rule kRelaxedModeUnsafeCall{
    RuleId::kRelaxedModeUnsafeCall,
    {"cudaMalloc and other potentially unsafe calls are allowed during a capture begun with\n"
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
    &check,
    nullptr,
    nullptr,
    Accepts::AnyCall,
    &rehearse,
    kind_bit(ApiKind::Unsafe)};

}  // namespace capguard::rules
