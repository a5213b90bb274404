// capture-ended-by-exception: a Python exception left the capture's block, whose __exit__ ended
// the capture; CUDA made a graph of the work captured before it.
#include "rules/capture_ended_by_exception.h"

#include <fmt/format.h>

#include "model/frame_owner.h"
#include "model/framework_calls.h"
#include "rules/rule.h"

namespace capguard::rules {

extern const Rule kCaptureEndedByException;
constinit const Rule kCaptureEndedByException{
    RuleId::kCaptureEndedByException,
    {"A capture whose Python block raised still ends: `with torch.cuda.graph(g):` calls\n"
     "capture_end() in __exit__ while the exception propagates, and CUDA makes a graph of the\n"
     "work captured before it. Nothing failed in CUDA, so the capture looks fine; the graph\n"
     "holds part of the step, and a program that catches the exception and replays g runs that\n"
     "part only. PyTorch raises this way on its own checks before any CUDA call fails (a\n"
     "torch.compile'd function first called inside the capture: \"Cannot copy between CPU and\n"
     "CUDA tensors during CUDA graph capture\").\n"
     "\n"
     "    with torch.cuda.graph(g):\n"
     "        y = compiled(x)    # raises RuntimeError: the capture ends here, partial\n"
     "\n"
     "capguard sees it from the Python exception the capturing thread was handling when it\n"
     "ended the capture (CPython 3.11 to 3.13): its type, first line and the line it came\n"
     "through. A capture that failed in CUDA has its own finding instead.\n"
     "\n"
     "capguard shows the line that raised as the culprit, and the capture's end (the `with`\n"
     "line) beside it. What raised is named where capguard knows it (model/framework_calls.def,\n"
     "Raised: a pageable CPU tensor copied to or from the GPU, torch.compile compiling).\n"
     "\n"
     "Fix: fix what raised (pin a CPU tensor or copy it before the capture; keep a value read\n"
     "with .item() or .tolist() on the GPU; warm a compiled function up before capturing) and\n"
     "capture again; never replay a graph captured through an exception (g.reset() it where\n"
     "you catch it).",
     "fix what raised and capture again; never replay a graph captured through an exception"},
    nullptr,
    nullptr,
    nullptr};

namespace {

const Frame* exception_frame(const Location& location) {
  for (const Frame& frame : location.frames)
    if (is_python_exception_frame(frame)) return &frame;
  return nullptr;
}

// The culprit is the line that raised, not the `with` line whose __exit__ ended the capture:
// the exception passed through the user's frame there (the pseudo frame's line, its
// traceback's first entry: the frame that ran the `with` statement). The frames inside it at the
// end (__exit__, capture_end, CUDA) are the end's, not the raise's: they are left out, and the
// end is a related location; the pseudo frame stays innermost (never shown), so that what raised
// is named from it (framework_calls.def, Raised). Unchanged when the line or the user frame is
// unknown.
Location raised_at(const Location& end, const Frame& exception) {
  if (exception.line <= 0 || end.user() == nullptr || !is_python_frame(*end.user())) return end;
  Location raised = end;
  raised.frames.clear();
  raised.frames.push_back(exception);
  raised.frames.insert(raised.frames.end(), end.frames.begin() + end.user_frame, end.frames.end());
  raised.user_frame = 1;
  raised.frames[1].line = exception.line;
  return raised;
}

}  // namespace

void find_captures_ended_by_exception(Report& report) {
  const RuleInfo info = kCaptureEndedByException.info();
  std::vector<Finding> found;
  for (const CaptureInfo& capture : report.captures) {
    if (capture.status != CaptureState::Ok || !capture.end) continue;  // else its own finding
    const Frame* exception = exception_frame(*capture.end);
    if (exception == nullptr) continue;
    Finding f;
    f.rule = std::string(info.id);
    f.severity = info.severity;
    f.pid = capture.pid;
    f.process = capture.process;
    f.thread = capture.thread;
    f.capturing_thread = true;
    f.capture = capture.id;
    f.api = "cudaStreamEndCapture";
    f.location = raised_at(*capture.end, *exception);
    if (f.location.frames.size() != capture.end->frames.size())
      f.related.push_back({"capture-end", "its __exit__ ended the capture", *capture.end});
    // The framework's words are judged from the end's frames (torch.cuda.graph's __exit__),
    // which the culprit's location no longer holds; a Raised entry for what raised replaces
    // them (name_framework_calls).
    if (const FrameworkFix* fix = framework_fix(framework_of(*capture.end), f.rule)) {
      f.framework_headline = std::string(fix->headline);
      f.framework_fix = std::string(fix->fix);
    }
    const std::string nodes =
        capture.nodes ? fmt::format(" of {} nodes", *capture.nodes) : std::string();
    f.message = fmt::format(
        "capture #{} ended while Python handled an exception ({}): CUDA made its graph{} from the "
        "work captured before the exception, so replaying it runs part of what the block captures",
        capture.id, exception->function, nodes);
    found.push_back(std::move(f));
  }
  for (Finding& f : found) report.findings.push_back(std::move(f));
}

}  // namespace capguard::rules
