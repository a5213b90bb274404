// unsupported-during-capture: any other call that capture does not support (900).
#include <fmt/format.h>

#include "rules/rehearsal.h"
#include "rules/rule.h"

namespace capguard::rules {
namespace {

std::string_view hint(std::string_view base) {
  if (base.find("AddCallback") != std::string_view::npos)
    return " (use cudaLaunchHostFunc, which can be captured)";
  if (base.find("AttachMemAsync") != std::string_view::npos)
    return " (attach managed memory before the capture)";
  return "";
}

bool check(const Call& call, const CaptureModel& model, Draft& draft) {
  if (call.result() != kErrCaptureUnsupported) return false;
  switch (call.api.kind) {
    case ApiKind::StreamSync:
    case ApiKind::DeviceSync:
    case ApiKind::Unsafe:
      return false;  // their own rules
    case ApiKind::BeginCapture:
      if (call.stream_is_legacy()) return false;
      break;
    default:
      break;
  }
  const Capture* capture = capture_of(call);
  if (!capture) capture = call.own_capture;
  if (!capture) {
    std::vector<Capture*> prohibiting = model.prohibiting(call.ev->tid);
    if (!prohibiting.empty()) capture = prohibiting.front();
  }
  draft.capture = capture;
  draft.message = fmt::format(
      "{}{} is not supported during stream capture{}; CUDA returned {}{}", call.ev->api,
      call.has_stream ? " on " + describe_stream(call.stream) : std::string(),
      capture ? ", in " + describe_capture(*capture) : std::string(), describe_result(call),
      call.victims.empty() ? "" : " and invalidated the capture");
  draft.message += hint(call.api.base);
  return true;
}

// Rehearsal: a call stream capture does not support, on the region's thread.
bool rehearse(const RehearsalFacts& f, RehearsalWords& words) {
  if (f.other_thread || f.api.kind != ApiKind::Unsupported) return false;
  words = {"stream capture does not support it: CUDA would invalidate the capture",
           "unsupported call"};
  return true;
}

}  // namespace

extern const Rule kUnsupportedDuringCapture;
constinit const Rule kUnsupportedDuringCapture{
    RuleId::kUnsupportedDuringCapture,
    {"Some stream operations have no graph equivalent. cudaStreamAttachMemAsync,\n"
     "cudaStreamAddCallback and their driver twins are rejected on a capturing stream with\n"
     "cudaErrorStreamCaptureUnsupported (900), which invalidates the capture.\n"
     "\n"
     "    cudaStreamBeginCapture(s, ...);\n"
     "    cudaStreamAddCallback(s, cb, 0, 0); // 900: the capture dies here\n"
     "\n"
     "Fix: use the capturable equivalent (cudaLaunchHostFunc instead of cudaStreamAddCallback),\n"
     "or do the operation before the capture begins.",
     "use the capturable equivalent or move the call before the capture"},
    &check,
    nullptr,
    nullptr,
    Accepts::FailedCalls,
    &rehearse};

}  // namespace capguard::rules
