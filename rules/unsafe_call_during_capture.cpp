// unsafe-call-during-capture: allocation/free/pinning prohibited by the capture mode.
#include <fmt/format.h>

#include "rules/rehearsal.h"
#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check(const Call& call, const CaptureModel& model, Draft& draft) {
  if (call.api.kind != ApiKind::Unsafe || call.result() != kErrCaptureUnsupported) return false;
  const Capture* capture = capture_of(call);
  if (!capture) {
    std::vector<Capture*> prohibiting = model.prohibiting(call.ev->tid);
    if (!prohibiting.empty()) capture = prohibiting.front();
  }
  draft.capture = capture;
  if (!capture) {
    draft.message =
        fmt::format("{} was refused as potentially unsafe during stream capture; CUDA returned {}",
                    call.ev->api, describe_result(call));
  } else if (capture->tid == call.ev->tid) {
    draft.message = fmt::format(
        "{} while this thread records {}: allocation, free and pinning are potentially unsafe "
        "calls, prohibited in {} mode; CUDA returned {} and invalidated the capture",
        call.ev->api, describe_capture(*capture), mode_name(capture->mode), describe_result(call));
  } else {
    draft.message = fmt::format(
        "{} on thread {} while thread {} records {}: a global-mode capture prohibits "
        "potentially unsafe calls on every thread in global mode; CUDA returned {} and "
        "invalidated the capture",
        call.ev->api, call.ev->tid, capture->tid, describe_capture(*capture),
        describe_result(call));
  }
  return true;
}

// Rehearsal: an allocation, free or pinning a global or thread_local capture of the region
// prohibits (another thread's too, in global mode).
bool rehearse(const RehearsalFacts& f, RehearsalWords& words) {
  if (f.api.kind != ApiKind::Unsafe || f.mode == trace::CaptureMode::Relaxed) return false;
  if (f.other_thread && f.mode != trace::CaptureMode::Global) return false;
  if (!capture_prohibits_unsafe(f)) return false;
  words = {
      "the capture mode prohibits it: CUDA would return "
      "cudaErrorStreamCaptureUnsupported and invalidate the capture",
      "allocation or pinning"};
  return true;
}

}  // namespace

extern const Rule kUnsafeCallDuringCapture;
constinit const Rule kUnsafeCallDuringCapture{
    RuleId::kUnsafeCallDuringCapture,
    {"cudaMalloc, cudaFree, cudaMallocHost, cudaHostRegister, cuMemAlloc and similar calls are\n"
     "\"potentially unsafe\" during capture. A thread may not make them while it has its own\n"
     "capture begun in Global or ThreadLocal mode, nor (in its default Global interaction mode)\n"
     "while any other thread has a Global capture open. CUDA answers 900 and invalidates the\n"
     "capture - on the capturing thread or on an innocent-looking worker thread.\n"
     "\n"
     "    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);\n"
     "    cudaMalloc(&p, n);                 // 900: the capture dies here\n"
     "\n"
     "Fix: allocate before capturing, use cudaMallocAsync/cudaFreeAsync on the capturing stream\n"
     "(they become memory nodes), or, for other threads, begin the capture in ThreadLocal mode\n"
     "or have them call cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureModeRelaxed).",
     "allocate before the capture, or use cudaMallocAsync/cudaFreeAsync on the capturing stream"},
    &check,
    nullptr,
    nullptr,
    Accepts::FailedCalls,
    &rehearse};

}  // namespace capguard::rules
