// The sanitizer-style text report: one block per finding (heading, the call and its result,
// the message, the culprit's stack from the user frame outward, the capture it broke, the
// related locations, the fix), then one greppable SUMMARY line.
#include <fmt/format.h>

#include <iterator>
#include <string>
#include <string_view>

#include "analyzer/render.h"
#include "analyzer/symbolizer.h"
#include "analyzer/utf8.h"
#include "rules/rule_table.h"

namespace capguard {
namespace {

constexpr int kMaxFramesShown = 12;

struct Style {
  bool color = false;
  std::string_view paint(std::string_view code) const { return color ? code : ""; }
  std::string_view bold() const { return paint("\033[1m"); }
  std::string_view reset() const { return paint("\033[0m"); }
  std::string_view severity(Severity s) const {
    switch (s) {
      case Severity::Error:
        return paint("\033[1;31m");
      case Severity::Warning:
        return paint("\033[1;35m");
      case Severity::Note:
        return paint("\033[1;36m");
    }
    return "";
  }
};

std::string_view basename_of(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

const char* heading_word(Severity s) {
  switch (s) {
    case Severity::Error:
      return "ERROR";
    case Severity::Warning:
      return "WARNING";
    case Severity::Note:
      return "NOTE";
  }
  return "ERROR";
}

std::string plural(int n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// "#2 0x55d1c2a3b1b2 in train_step(float*) /src/app.cu:42 (app)"
void append_frame(std::string& out, size_t index, const Frame& frame, const Style& style,
                  bool is_user_frame) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "    {}#{} 0x{:x}", is_user_frame ? style.bold() : "", index, frame.address);
  if (!frame.function.empty()) fmt::format_to(it, " in {}", terminal_safe(frame.function));
  if (!frame.file.empty()) {
    fmt::format_to(it, " {}:{}", terminal_safe(frame.file), frame.line);
    if (!frame.module.empty())
      fmt::format_to(it, " ({})", terminal_safe(basename_of(frame.module)));
  } else if (!frame.module.empty()) {
    fmt::format_to(it, " ({}+0x{:x})", terminal_safe(frame.module), frame.offset);
  } else {
    out += " (no module maps this address)";
  }
  if (is_user_frame) out += style.reset();
  out += '\n';
}

bool is_outer_runtime_frame(const Frame& frame) {
  const FrameOwner owner = owner_of(frame);
  return owner == FrameOwner::Runtime || owner == FrameOwner::Unknown || frame.function == "_start";
}

// Shows the stack from the user frame outward: the frames inside CUDA and capguard above it
// and the C runtime's frames below main are counted, not listed.
void append_stack(std::string& out, const Location& location, const Style& style) {
  const auto& frames = location.frames;
  if (frames.empty()) {
    out += location.addresses.empty() ? "    (no stack recorded)\n" : "    (not symbolized)\n";
    return;
  }
  const size_t first = location.user_frame >= 0 ? static_cast<size_t>(location.user_frame) : 0;
  size_t last = frames.size();  // one past the last frame shown
  while (last > first + 1 && is_outer_runtime_frame(frames[last - 1])) --last;
  if (last - first > kMaxFramesShown) last = first + kMaxFramesShown;
  for (size_t i = first; i < last; ++i)
    append_frame(out, i, frames[i], style, static_cast<int>(i) == location.user_frame);
  const size_t inner = first, outer = frames.size() - last;
  if (inner > 0 && outer > 0)
    fmt::format_to(std::back_inserter(out), "    ({} inside CUDA/capguard and {} not shown)\n",
                   plural(static_cast<int>(inner), "frame", "frames"),
                   plural(static_cast<int>(outer), "outer frame", "outer frames"));
  else if (inner > 0)
    fmt::format_to(std::back_inserter(out), "    ({} inside CUDA/capguard not shown)\n",
                   plural(static_cast<int>(inner), "frame", "frames"));
  else if (outer > 0)
    fmt::format_to(std::back_inserter(out), "    ({} not shown)\n",
                   plural(static_cast<int>(outer), "outer frame", "outer frames"));
}

std::string related_heading(const Related& related) {
  std::string heading;
  if (related.role == "capture-begin")
    heading = "capture began here";
  else if (related.role == "capture-end")
    heading = "capture ended here";
  else if (related.role == "fork")
    heading = "stream forked into the capture here";
  else if (related.role == "event-record")
    heading = "event recorded here";
  else if (related.role == "last-work")
    heading = "last work on that stream here";
  else
    heading = related.role;
  if (!related.detail.empty()) heading += fmt::format(" ({})", terminal_safe(related.detail));
  return heading;
}

// Another process of the report has the same pid (several hosts or containers).
bool shares_pid(const Report& report, size_t index) {
  for (size_t i = 0; i < report.processes.size(); ++i)
    if (i != index && report.processes[i].pid == report.processes[index].pid) return true;
  return false;
}

const CaptureInfo* find_capture(const Report& report, std::optional<uint32_t> id) {
  if (!id) return nullptr;
  for (const auto& capture : report.captures)
    if (capture.id == *id) return &capture;
  return nullptr;
}

void append_finding(std::string& out, const Report& report, const Finding& finding,
                    const Style& style) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "=={}=={}{}: capguard: {}{}\n", finding.pid, style.severity(finding.severity),
                 heading_word(finding.severity), finding.rule, style.reset());
  out += "  ";
  if (!finding.api.empty()) {
    fmt::format_to(it, "{} returned ", terminal_safe(finding.api));
    if (finding.result_name.empty())
      fmt::format_to(it, "{} ", finding.result);
    else
      fmt::format_to(it, "{} ({}) ", finding.result_name, finding.result);
  }
  fmt::format_to(it, "on thread {}", finding.thread);
  if (finding.capture)
    out += finding.capturing_thread ? " (the capturing thread)" : " (not the capturing thread)";
  out += '\n';
  if (!finding.message.empty()) fmt::format_to(it, "  {}\n", terminal_safe(finding.message));
  append_stack(out, finding.location, style);

  const CaptureInfo* capture = find_capture(report, finding.capture);
  if (capture != nullptr) {
    fmt::format_to(it, "  capture #{} (stream 0x{:x}, {} mode, thread {}, {}) began here:\n",
                   capture->id, capture->stream, capture->mode, capture->thread,
                   to_string(capture->status));
    append_stack(out, capture->begin, style);
  }
  for (const auto& related : finding.related) {
    const bool repeats_capture_begin = capture != nullptr && related.role == "capture-begin" &&
                                       related.location.seq == capture->begin.seq;
    if (repeats_capture_begin) continue;
    fmt::format_to(it, "  {}:\n", related_heading(related));
    append_stack(out, related.location, style);
  }
  if (finding.consequences > 0)
    fmt::format_to(it, "  {} failed only because of this one (folded into this finding)\n",
                   plural(static_cast<int>(finding.consequences), "later call", "later calls"));
  if (const RuleInfo* rule = find_rule(finding.rule); rule != nullptr && !rule->fix.empty())
    fmt::format_to(it, "  fix: {}\n", rule->fix);
  fmt::format_to(it, "  [{}] see `capguard explain {}`\n\n", finding.rule, finding.rule);
}

std::string summary_line(const Report& report) {
  uint64_t by_state[4] = {};
  for (const auto& capture : report.captures)
    by_state[static_cast<int>(capture.status)] += capture.count;
  const uint64_t total = report.capture_count();
  std::string captures = fmt::format("{} {}", total, total == 1 ? "capture" : "captures");
  std::string parts;
  for (CaptureState s :
       {CaptureState::Ok, CaptureState::Invalidated, CaptureState::Failed, CaptureState::Open}) {
    const uint64_t n = by_state[static_cast<int>(s)];
    if (n == 0) continue;
    parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", n, to_string(s));
  }
  if (!parts.empty()) captures += ": " + parts;
  return fmt::format("SUMMARY: capguard: {}, {}, {} in {} ({})\n",
                     plural(report.count(Severity::Error), "error", "errors"),
                     plural(report.count(Severity::Warning), "warning", "warnings"),
                     plural(report.count(Severity::Note), "note", "notes"),
                     plural(static_cast<int>(report.processes.size()), "process", "processes"),
                     captures);
}

}  // namespace

std::string render_text(const Report& report, const RenderOptions& options) {
  const Style style{options.color};
  std::string out;
  const bool several = report.processes.size() > 1;
  for (size_t i = 0; i < report.processes.size(); ++i) {
    const ProcessInfo& process = report.processes[i];
    if (several)
      fmt::format_to(std::back_inserter(out), "== process {}{}: {}\n", process.pid,
                     shares_pid(report, i) ? " (" + terminal_safe(process.trace_path) + ")" : "",
                     terminal_safe(process.command));
    if (!process.attached && !process.attach_message.empty())
      fmt::format_to(std::back_inserter(out), "=={}==capguard: not attached: {}\n", process.pid,
                     terminal_safe(process.attach_message));
    for (const auto& finding : report.findings)
      if (belongs_to(report, i, finding.process, finding.pid))
        append_finding(out, report, finding, style);
  }
  for (const auto& finding : report.findings) {  // findings of processes without a record
    bool known = false;
    for (size_t i = 0; i < report.processes.size(); ++i)
      known = known || belongs_to(report, i, finding.process, finding.pid);
    if (!known) append_finding(out, report, finding, style);
  }
  out += summary_line(report);
  return out;
}

}  // namespace capguard
