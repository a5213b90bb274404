// capture-ended-by-exception: a Python exception left the capture's block, whose __exit__ ended
// the capture; CUDA made a graph of the work captured before it (issue 32).
#include "rules/capture_ended_by_exception.h"

#include <fmt/format.h>

#include "model/frame_owner.h"
#include "rules/rule.h"
#include "util/base_name.h"

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
     "Fix: fix what raised (warm a compiled function up before capturing) and capture again;\n"
     "never replay a graph captured through an exception (g.reset() it where you catch it).",
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
    f.location = *capture.end;
    const Frame* user = capture.end->user();
    std::string where;
    if (user != nullptr && exception->line > 0)
      where = fmt::format(" (through {}:{})", base_name(user->file), exception->line);
    const std::string nodes =
        capture.nodes ? fmt::format(" of {} nodes", *capture.nodes) : std::string();
    f.message = fmt::format(
        "capture #{} ended while Python handled {}{}: CUDA made its graph{} from the work "
        "captured before the exception, so replaying it runs part of what the block captures",
        capture.id, exception->function, where, nodes);
    found.push_back(std::move(f));
  }
  for (Finding& f : found) report.findings.push_back(std::move(f));
}

}  // namespace capguard::rules
