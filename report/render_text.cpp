// The sanitizer-style text report: one block per finding (heading, the call and its result,
// the message, the culprit's stack from the user frame outward, the capture it broke, the
// related locations, the fix), then one greppable SUMMARY line.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>

#include "model/enum_names.h"
#include "model/frame_owner.h"
#include "report/coverage_section.h"
#include "report/finding_groups.h"
#include "report/lifecycle_table.h"
#include "report/python_stack.h"
#include "report/rehearsal_section.h"
#include "report/render.h"
#include "report/source_lines.h"
#include "report/text_wrap.h"
#include "report/utf8.h"
#include "util/base_name.h"

namespace capguard {
namespace {

constexpr size_t kMaxFramesShown = 12;         // from the user frame outward
constexpr size_t kMaxLibraryFramesShown = 10;  // between CUDA and the user frame
constexpr size_t kLongFunctionName = 100;      // shortened past this many bytes

struct Style {
  bool color = false;
  bool native_frames = false;    // Python stacks: every frame, not the Python-first view
  std::string_view source_root;  // Python stacks: the user's files shown relative to it
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

std::string plural(int n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// "#2 0x55d1c2a3b1b2 in train_step(float*) /src/app.cu:42 (app)"
void append_frame(std::string& out, size_t index, const Frame& frame, const Style& style,
                  bool is_user_frame) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "    {}#{} 0x{:x}", is_user_frame ? style.bold() : "", index, frame.address);
  // Long C++ names (template arguments, lambdas) are shortened for reading; JSON, SARIF and
  // the HTML report's hover keep them whole.
  if (!frame.function.empty())
    fmt::format_to(it, " in {}",
                   terminal_safe(frame.function.size() > kLongFunctionName
                                     ? short_function_name(frame.function)
                                     : frame.function));
  if (!frame.file.empty()) {
    fmt::format_to(it, " {}:{}", terminal_safe(frame.file), frame.line);
    if (!frame.module.empty()) fmt::format_to(it, " ({})", terminal_safe(base_name(frame.module)));
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

//       11 |   cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
//    >  12 |   cudaStreamSynchronize(s);
void append_source(std::string& out, SourceReader& sources, const Frame& frame,
                   const Style& style) {
  for (const SourceLine& line : sources.around(frame.file, frame.line, 1)) {
    const bool culprit = line.number == frame.line;
    fmt::format_to(std::back_inserter(out), "      {}{} {:>5} |{}{}{}\n",
                   culprit ? style.bold() : "", culprit ? '>' : ' ', line.number,
                   line.text.empty() ? "" : " ", terminal_safe(line.text),
                   culprit ? style.reset() : "");
  }
}

// What a finding's Python stacks showed and left out: a block whose user line an earlier block
// showed is said in one line, and what all of them folded is said once, after them.
struct PythonBlocks {
  std::string source_root;
  std::vector<std::pair<std::string, std::string>> shown;  // user line key, its via line
  size_t inner = 0, interpreter = 0, outer = 0, native = 0, python = 0;
};

// "#0 torch_default_stream_in_capture.py:14 in capture": a traceback's line, no address.
void append_python_frame(std::string& out, size_t number, const Frame& frame,
                         const std::string& path, const Style& style, bool is_user_frame) {
  fmt::format_to(std::back_inserter(out), "    {}#{} {}:{} in {}{}\n",
                 is_user_frame ? style.bold() : "", number, terminal_safe(path), frame.line,
                 terminal_safe(frame.function), is_user_frame ? style.reset() : "");
}

// A Python program's stack, Python-first (python_stack.h): the user's line (#0) and its source,
// how it reached CUDA in one line, then its callers; interpreter frames left out.
void append_python_stack(std::string& out, const Location& location, const ShownFrames& shown,
                         const Style& style, SourceReader* sources, PythonBlocks& blocks) {
  const PythonStackView view = python_stack_view(location, shown.first, shown.last);
  const auto& frames = location.frames;
  const std::string script_dir = script_dir_of(location);
  auto path = [&](const Frame& f) { return display_path(f.file, blocks.source_root, script_dir); };
  auto it = std::back_inserter(out);
  const Frame& user = frames[view.user];
  const std::string key = user_line_key(user);
  for (const auto& [seen, via] : blocks.shown) {
    if (seen != key) continue;
    fmt::format_to(it, "    #0 {}:{} in {} (the same line as above)\n", terminal_safe(path(user)),
                   user.line, terminal_safe(user.function));
    if (!view.via.empty() && view.via != via)
      fmt::format_to(it, "      → {}\n", terminal_safe(view.via));
    return;
  }
  blocks.shown.emplace_back(key, view.via);
  append_python_frame(out, 0, user, path(user), style, true);
  if (sources) append_source(out, *sources, user, style);
  if (!view.via.empty()) fmt::format_to(it, "      → {}\n", terminal_safe(view.via));
  size_t number = 1;
  for (const PythonCaller& caller : view.callers) {
    const Frame& frame = frames[caller.frame];
    if (caller.count > 1)
      fmt::format_to(it, "    … {} ({} frames)\n", terminal_safe(caller.group), caller.count);
    else if (is_python_frame(frame))
      append_python_frame(out, number++, frame, path(frame), style, false);
    else
      append_frame(out, number++, frame, style, false);
  }
  blocks.inner += shown.hidden_inner();
  blocks.interpreter += view.interpreter;
  blocks.outer += shown.hidden_outer(location);
  blocks.native += view.folded_native;
  blocks.python += view.folded_python;
}

// "(8 CUDA/capguard, 22 library Python, ... frames not shown; --native-frames)", once.
void append_python_footer(std::string& out, const PythonBlocks& blocks) {
  std::string note;
  auto add = [&](size_t n, std::string_view what) {
    if (n > 0) note += fmt::format("{}{} {}", note.empty() ? "" : ", ", n, what);
  };
  add(blocks.inner, "CUDA/capguard");
  add(blocks.python, "library Python");
  add(blocks.native, "native library");
  add(blocks.interpreter, "interpreter");
  add(blocks.outer, "outer");
  if (!note.empty())
    fmt::format_to(std::back_inserter(out), "  ({} frames not shown; --native-frames)\n", note);
}

// Shows the stack from the first frame outside CUDA and capguard: the library frames that led
// from the user's call to CUDA (the middle of a long run elided), then the user frame and its
// callers. The frames inside CUDA and capguard and the C runtime's frames below main are
// counted, not listed. With a SourceReader, the user frame's line follows it with one line of
// context, as compilers print it.
void append_stack(std::string& out, const Location& location, const Style& style,
                  SourceReader* sources, PythonBlocks& blocks) {
  const auto& frames = location.frames;
  if (frames.empty()) {
    out += location.addresses.empty() ? "    (no stack recorded)\n" : "    (not symbolized)\n";
    return;
  }
  const ShownFrames shown = frames_to_show(location);
  auto it = std::back_inserter(out);
  if (!style.native_frames && location.user_frame >= 0 &&
      is_python_frame(frames[static_cast<size_t>(location.user_frame)])) {
    append_python_stack(out, location, shown, style, sources, blocks);
    return;
  }
  const size_t libraries = shown.anchor - shown.first;
  const bool elide = libraries > kMaxLibraryFramesShown + 1;  // a line for one frame saves none
  for (size_t i = shown.first; i < shown.last; ++i) {
    if (elide && i == shown.first + kMaxLibraryFramesShown / 2) {
      const size_t skipped = libraries - kMaxLibraryFramesShown;
      fmt::format_to(it, "    ({} not shown)\n",
                     plural(static_cast<int>(skipped), "library frame", "library frames"));
      i += skipped - 1;
      continue;
    }
    const bool user = static_cast<int>(i) == location.user_frame;
    append_frame(out, i, frames[i], style, user);
    if (user && sources) append_source(out, *sources, frames[i], style);
  }
  const size_t inner = shown.hidden_inner(), outer = shown.hidden_outer(location);
  if (inner > 0 && outer > 0)
    fmt::format_to(it, "    ({} inside CUDA/capguard and {} not shown)\n",
                   plural(static_cast<int>(inner), "frame", "frames"),
                   plural(static_cast<int>(outer), "outer frame", "outer frames"));
  else if (inner > 0)
    fmt::format_to(it, "    ({} inside CUDA/capguard not shown)\n",
                   plural(static_cast<int>(inner), "frame", "frames"));
  else if (outer > 0)
    fmt::format_to(it, "    ({} not shown)\n",
                   plural(static_cast<int>(outer), "outer frame", "outer frames"));
}

// A framework's thread's stack, as a Python user wants it: one line from its body to CUDA,
// each library's run folded (python_stack.h); --native-frames lists every frame.
void append_thread_stack(std::string& out, const Location& location, const Style& style,
                         PythonBlocks& blocks) {
  const auto& frames = location.frames;
  if (style.native_frames || frames.empty())
    return append_stack(out, location, style, nullptr, blocks);
  const ShownFrames shown = frames_to_show(location);
  size_t end = frames.size();
  while (end > shown.first + 1 && is_outer_runtime_frame(frames[end - 1])) --end;
  const PythonStackView view = python_stack_view(location, shown.first, end);
  fmt::format_to(std::back_inserter(out), "    → {}\n", terminal_safe(view.via));
  blocks.inner += shown.hidden_inner();
  blocks.interpreter += view.interpreter;
  blocks.outer += frames.size() - end;
  blocks.native += view.folded_native;
  blocks.python += view.folded_python;
}

}  // namespace

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
  else if (related.role == "last-known")
    heading = "the capture was last seen here";
  else if (related.role == "join-record-failed")
    heading = "the join's event record failed here";
  else if (related.role == "started-by")
    heading = "its work likely started here";
  else
    heading = related.role;
  if (!related.detail.empty()) heading += fmt::format(" ({})", terminal_safe(related.detail));
  return heading;
}

namespace {

// "thread 29" in the message, and not as the start of "thread 2958".
bool mentions_thread(std::string_view message, uint32_t thread) {
  const std::string needle = fmt::format("thread {}", thread);
  for (size_t at = message.find(needle); at != std::string_view::npos;
       at = message.find(needle, at + 1)) {
    const size_t end = at + needle.size();
    if (end == message.size() || message[end] < '0' || message[end] > '9') return true;
  }
  return false;
}

// Another process of the report has the same pid (several hosts or containers).
// `scope`: where its group was found across processes, "" for one process.
void append_finding(std::string& out, const Report& report, const Finding& finding,
                    const GroupScope& scope, const Style& style, SourceReader* sources,
                    std::span<const RuleInfo> rules) {
  auto it = std::back_inserter(out);
  const std::string who = terminal_safe(finding_who(report, finding));
  // The heading says which ranks: all of them, or the ones that diverged.
  std::string where;
  if (scope.processes.size() > 1 || scope.diverged) {
    where = ", " + scope.words;
    if (scope.diverged && scope.ranks.size() == 1 && !who.empty()) where += ": " + who;
  } else if (!who.empty()) {
    where = ", " + who;
  }
  fmt::format_to(it, "=={}=={}{}: capguard: {}{}{}{}\n", finding.pid,
                 style.severity(finding.severity), heading_word(finding.severity), finding.rule,
                 finding.rehearsed ? rehearsed_heading(finding.severity) : "", where,
                 style.reset());
  if (scope.processes.size() > 1 && !who.empty())
    fmt::format_to(it, "  shown as {} saw it; the others at the same line\n", who);
  if (!finding.test.empty()) fmt::format_to(it, "  in test {}\n", terminal_safe(finding.test));
  // In a framework's words first where the culprit is its code: what happened, the
  // fix, then CUDA's account (streams, error codes).
  const bool headline = !finding.framework_headline.empty();
  if (headline) {
    fmt::format_to(it, "  {}\n", terminal_safe(finding.framework_headline));
    if (!finding.framework_fix.empty())
      fmt::format_to(it, "  fix: {}\n", terminal_safe(finding.framework_fix));
  }
  // The message: what went wrong, the call and what CUDA answered, said once.
  if (!finding.message.empty()) {
    if (!finding.framework_call.empty())  // what the user wrote, then what CUDA saw
      fmt::format_to(it, "  {}: ", terminal_safe(finding.framework_call));
    else
      out += "  ";
    fmt::format_to(it, "{}\n", terminal_safe(finding.message));
  }
  const bool failed = finding.result != 0;
  if (failed && (finding.message.empty() ||
                 (!finding.result_name.empty() &&
                  finding.message.find(finding.result_name) == std::string::npos))) {
    fmt::format_to(it, "  {} returned ",
                   finding.api.empty() ? std::string("the call") : terminal_safe(finding.api));
    if (finding.result_name.empty())
      fmt::format_to(it, "{}\n", finding.result);
    else
      fmt::format_to(it, "{} ({})\n", finding.result_name, finding.result);
  }
  PythonBlocks blocks;
  blocks.source_root = std::string(style.source_root);
  const Related* started = nullptr;  // kept only for a finding without a user frame
  for (const Related& related : finding.related)
    if (related.role == "started-by") started = &related;
  if (started != nullptr) {
    // A thread with no user frame: the user line that started its work first.
    const std::string thread = finding.thread_name.empty()
                                   ? fmt::format("thread {}", finding.thread)
                                   : fmt::format("{} {}", finding.thread_name, finding.thread);
    fmt::format_to(it, "  called on the {}, for work likely started here ({}):\n", thread,
                   terminal_safe(started->detail));
    append_stack(out, started->location, style, sources, blocks);
    fmt::format_to(it, "  on the {}:\n", thread);
    append_thread_stack(out, finding.location, style, blocks);
  } else {
    out += "  called here";
    if (!finding.thread_name.empty()) {
      fmt::format_to(it, " on the {} (thread {})", finding.thread_name, finding.thread);
    } else if (!mentions_thread(finding.message, finding.thread)) {
      fmt::format_to(it, " on thread {}", finding.thread);
      if (finding.capture)
        out += finding.capturing_thread ? " (the capturing thread)" : " (not the capturing thread)";
    }
    out += ":\n";
    if (!finding.thread_name.empty())
      append_thread_stack(out, finding.location, style, blocks);
    else
      append_stack(out, finding.location, style, sources, blocks);
  }

  const CaptureInfo* capture = report.find_capture(finding.capture);
  if (capture != nullptr) {
    fmt::format_to(it, "  capture #{} (stream 0x{:x}, {} mode, thread {}, {}) began here:\n",
                   capture->id, capture->stream, mode_name(capture->mode), capture->thread,
                   to_string(capture->status));
    append_stack(out, capture->begin, style, sources, blocks);
  }
  for (const auto& related : finding.related) {
    const bool repeats_capture_begin = capture != nullptr && related.role == "capture-begin" &&
                                       related.location.seq == capture->begin.seq;
    if (repeats_capture_begin || &related == started) continue;
    fmt::format_to(it, "  {}:\n", related_heading(related));
    append_stack(out, related.location, style, sources, blocks);
  }
  append_python_footer(out, blocks);
  if (finding.consequences > 0)
    fmt::format_to(it, "  {} failed only because of this one (folded into this finding)\n",
                   plural(static_cast<int>(finding.consequences), "later call", "later calls"));
  if (headline)
    ;  // its fix came with the headline
  else if (!finding.framework_fix.empty())
    fmt::format_to(it, "  fix: {}\n", terminal_safe(finding.framework_fix));
  else if (const RuleInfo* rule = find_rule_in(rules, finding.rule);
           rule != nullptr && !rule->fix.empty())
    fmt::format_to(it, "  fix: {}\n", rule->fix);
  fmt::format_to(it, "  [{}] see `capguard explain {}`\n\n", finding.rule, finding.rule);
}

}  // namespace

ShownFrames frames_to_show(const Location& location) {
  const auto& frames = location.frames;
  ShownFrames shown;
  if (frames.empty()) return shown;
  const bool has_user = location.user_frame >= 0;
  const size_t user = has_user ? static_cast<size_t>(location.user_frame) : 0;
  shown.first = first_frame_outside_cuda(frames);
  if (shown.first >= frames.size() || (has_user && shown.first > user)) shown.first = user;
  shown.anchor = has_user ? user : shown.first;  // the outer frames are counted from here
  shown.last = frames.size();
  while (shown.last > shown.anchor + 1 && is_outer_runtime_frame(frames[shown.last - 1]))
    --shown.last;
  if (shown.last - shown.anchor > kMaxFramesShown) shown.last = shown.anchor + kMaxFramesShown;
  return shown;
}

namespace {

// One line per CUPTI client of the program that capguard shared CUPTI with: why its profile
// still works, and that capguard kept watching.
// The CUDA the processes ran, one line per distinct set of versions, first: which
// runtime, driver and CUPTI a finding was seen through. Traces before format 7 say nothing.
std::string cuda_header(const Report& report) {
  std::vector<std::pair<std::string, size_t>> seen;  // text, processes
  for (const ProcessInfo& process : report.processes) {
    if (!process.cuda.recorded) continue;
    std::string text = cuda_info_text(process.cuda);
    auto same =
        std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == text; });
    if (same != seen.end())
      ++same->second;
    else if (seen.size() < 8)  // bounded: a report may hold any number of processes
      seen.emplace_back(std::move(text), 1);
  }
  std::string out;
  for (const auto& [text, processes] : seen)
    out += fmt::format("capguard: {}{}\n", terminal_safe(text),
                       processes > 1 ? fmt::format(" ({} processes)", processes) : "");
  return out;
}

std::string cupti_clients_text(const Report& report) {
  std::string out;
  for (const ProcessInfo& process : report.processes) {
    for (const CuptiClientInfo& client : process.cupti_clients) {
      std::string how = client.beside ? "beside capguard (CUPTI's multi-subscriber mode)"
                                      : "capguard forwarded the callbacks it enabled";
      if (client.finalizes != 0)
        how += fmt::format("; its cuptiFinalize ({}x) ended its own subscription only",
                           client.finalizes);
      if (client.refused != 0)
        how += fmt::format("; {} more subscriber(s) refused, as CUPTI alone refuses them",
                           client.refused);
      fmt::format_to(std::back_inserter(out), "note: process {} shares CUPTI with {}: {}\n",
                     process.pid, terminal_safe(client.name), how);
    }
  }
  return out;
}

}  // namespace

std::string summary_line(const Report& report) {
  uint64_t by_state[6] = {};  // one per CaptureState
  for (const auto& capture : report.captures)
    by_state[static_cast<int>(capture.status)] += capture.count;
  const uint64_t total = report.capture_count();
  std::string captures = fmt::format("{} {}", total, total == 1 ? "capture" : "captures");
  std::string parts;
  for (CaptureState s : {CaptureState::Ok, CaptureState::Invalidated, CaptureState::Failed,
                         CaptureState::Open, CaptureState::Ended, CaptureState::Unknown}) {
    const uint64_t n = by_state[static_cast<int>(s)];
    if (n == 0) continue;
    parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", n, to_string(s));
  }
  if (!parts.empty()) captures += ": " + parts;
  // Repeats print once ("and N more times"): say how many findings the report shows.
  const FindingGroups groups = group_findings(report);
  const size_t repeats =
      static_cast<size_t>(std::count(groups.repeat.begin(), groups.repeat.end(), true));
  if (repeats > 0)
    captures +=
        fmt::format("; {} shown, {} more repeat them", report.findings.size() - repeats, repeats);
  // Where: the processes, or a job's ranks, how many reported of how many: "in 7 of
  // 8 ranks" when every process is a rank, else both ("in 3 processes, 2 of 2 ranks": the
  // launcher traced too).
  const auto processes = static_cast<int>(report.processes.size());
  std::string where = plural(processes, "process", "processes");
  if (const uint32_t world = world_size_of(report); world != 0) {
    const uint32_t ranks = ranks_reported(report);
    where =
        fmt::format("{}{} of {} ranks",
                    ranks == static_cast<uint32_t>(processes) ? "" : where + ", ", ranks, world);
  }
  const auto count = [&](Severity s) {  // "1 error", "2 warnings": the severities' own names
    return plural(report.count(s), to_string(s), std::string(to_string(s)) + "s");
  };
  return fmt::format("SUMMARY: capguard: {}, {}, {} in {} ({})\n", count(Severity::Error),
                     count(Severity::Warning), count(Severity::Note), where, captures);
}

// Identical findings (report/finding_groups.h) print once, the first of them followed by "and N
// more times".
// Only the repeats in the first finding's process: the heading counts the other processes.
void append_repeats(std::string& out, const Report& report, size_t first,
                    const std::vector<size_t>& all_others) {
  std::vector<size_t> others;
  const auto process = process_index(report, report.findings[first]);
  for (size_t i : all_others)
    if (process_index(report, report.findings[i]) == process) others.push_back(i);
  if (others.empty()) return;
  std::string captures;
  size_t listed = 0;
  for (size_t i : others) {
    const Finding& f = report.findings[i];
    if (!f.capture) continue;
    if (++listed > 8) {
      captures += ", ...";
      break;
    }
    captures += fmt::format("{}#{}", captures.empty() ? "" : ", ", *f.capture);
  }
  // Before the blank line that ends the finding's block.
  if (out.ends_with("\n\n")) out.pop_back();
  fmt::format_to(std::back_inserter(out), "  and {} more {}{}\n\n", others.size(),
                 others.size() == 1 ? "time" : "times",
                 captures.empty() ? "" : " (captures " + captures + ")");
}

std::string render_text(const Report& report, const RenderOptions& options) {
  SourceReader reader(options.source_root);
  return render_text(report, options, reader);
}

std::string render_text(const Report& report, const RenderOptions& options, SourceReader& reader) {
  const Style style{options.color, options.native_frames, options.source_root};
  const FindingGroups groups = group_findings(report);
  SourceReader* sources = options.source ? &reader : nullptr;
  std::string out;
  // Thresholds not at their default (--rule-option) change what is reported: said first.
  for (const RuleOptionValue& o : report.rule_options)
    out += fmt::format("capguard: rule option {}.{} = {} (default {})\n", o.rule, o.option, o.value,
                       o.default_value);
  const bool several = report.processes.size() > 1;
  // Grouped once: a report may hold any number of processes.
  std::vector<std::vector<const Finding*>> by_process(report.processes.size());
  std::vector<const Finding*> unknown;
  const ProcessOwners owners(report);
  for (const auto& finding : report.findings) {
    bool known = false;
    owners.for_each(finding.process, finding.pid, [&](size_t i) {
      by_process[i].push_back(&finding);
      known = true;
    });
    if (!known) unknown.push_back(&finding);
  }
  out += cuda_header(report);
  const auto print = [&](size_t f) {
    append_finding(out, report, report.findings[f], group_scope(report, groups, f), style, sources,
                   options.rules);
    append_repeats(out, report, f, groups.others[f]);
  };
  for (size_t i = 0; i < report.processes.size(); ++i) {
    const ProcessInfo& process = report.processes[i];
    // Findings that repeat another process's are said under that one's.
    const bool prints_finding =
        std::any_of(by_process[i].begin(), by_process[i].end(), [&](const Finding* finding) {
          return !groups.repeat[static_cast<size_t>(finding - report.findings.data())];
        });
    const bool says_something = prints_finding || !process.cupti_lost.empty() ||
                                (!process.attached && !process.attach_message.empty());
    std::string who = process.who ? terminal_safe(who_label(*process.who)) : "";
    if (who.empty() && owners.with_pid(process.pid) > 1) who = terminal_safe(process.trace_path);
    if (several && says_something)  // a process with nothing to report gets no header
      fmt::format_to(std::back_inserter(out), "== process {}{}: {}\n", process.pid,
                     who.empty() ? "" : (process.who ? ", " + who : " (" + who + ")"),
                     terminal_safe(process.command));
    if (!process.attached && !process.attach_message.empty())
      fmt::format_to(std::back_inserter(out), "=={}==capguard: not attached: {}\n", process.pid,
                     terminal_safe(process.attach_message));
    if (!process.cupti_lost.empty())
      fmt::format_to(std::back_inserter(out), "=={}==capguard: stopped watching: {}\n", process.pid,
                     terminal_safe(process.cupti_lost));
    for (const Finding* finding : by_process[i]) {
      const size_t f = static_cast<size_t>(finding - report.findings.data());
      if (!groups.repeat[f]) print(f);
    }
  }
  for (const Finding* finding : unknown) {  // findings of processes without a record
    const size_t f = static_cast<size_t>(finding - report.findings.data());
    if (!groups.repeat[f]) print(f);
  }
  out += lifecycle_text(report);
  out += rehearsal_text(report);
  out += coverage_text(report);
  out += cupti_clients_text(report);
  out += summary_line(report);
  return wrap_long_lines(out, options.native_frames);
}

}  // namespace capguard
