// escaped-sync-copy: a synchronous copy/memset by a capturing thread, accepted by CUDA (its
// capture stream is non-blocking), ran once now and is not in the graph.
#include <fmt/format.h>

#include "rules/rehearsal.h"
#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check(const Call& call, const CaptureModel&, Draft& draft) {
  if (call.api.kind != ApiKind::SyncCopy || call.result() != 0 || !call.victims.empty())
    return false;
  const Capture* capture = call.own_capture;
  if (!capture || !capture->valid() || call.stream_capture) return false;
  draft.capture = capture;
  draft.message = fmt::format(
      "{} is synchronous: it ran once, now, on {} while this thread records {} on a "
      "non-blocking stream; it is not part of the graph and replays will not repeat it",
      call.ev->api, describe_stream(call.stream), describe_capture(*capture));
  return true;
}

// Rehearsal: a synchronous copy by the region's thread while it runs on a non-blocking stream.
bool rehearse(const RehearsalFacts& f, RehearsalWords& words) {
  if (f.other_thread || f.api.kind != ApiKind::SyncCopy || !f.origin_non_blocking) return false;
  words = {
      "a synchronous copy or memset runs now, at capture time, and would be missing from "
      "the graph",
      "host copy"};
  return true;
}

}  // namespace

extern const Rule kEscapedSyncCopy;
constinit const Rule kEscapedSyncCopy{
    RuleId::kEscapedSyncCopy,
    {"cudaMemcpy, cudaMemset, cudaMemcpyToSymbol, cuMemcpyHtoD and the other synchronous\n"
     "copies run on the NULL stream. When the capture stream was created with\n"
     "cudaStreamNonBlocking (PyTorch's and CuPy's are), CUDA accepts them during the capture:\n"
     "they execute immediately, once, and the graph does not contain them. Every replay then\n"
     "misses the copy - silently.\n"
     "\n"
     "    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);\n"
     "    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);\n"
     "    cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);   // runs now, not on replay\n"
     "\n"
     "Fix: use the async variant on the capturing stream (cudaMemcpyAsync(d, h, n, kind, s)),\n"
     "or do the copy outside the captured region.",
     "use cudaMemcpyAsync/cudaMemsetAsync on the capturing stream"},
    &check,
    nullptr,
    nullptr,
    Accepts::AnyCall,
    &rehearse,
    kind_bit(ApiKind::SyncCopy)};

}  // namespace capguard::rules
