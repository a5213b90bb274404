#include "model/framework_calls.h"

#include <iterator>

#include "model/frame_owner.h"

namespace capguard {
namespace {

constexpr FrameworkCall kCalls[] = {
#define CAPGUARD_FRAMEWORK_CALL(kind, function, file, words, rules, fix) \
  {FrameworkCallKind::kind, function, file, words, rules, fix},
#include "model/framework_calls.def"
};

// `pattern` occurs in `text`, where '*' in the pattern stands for any run of characters (for
// Cython's names: __pyx_pw_4cupy_4cuda_6stream_11_BaseStream_19synchronize).
bool contains(std::string_view text, std::string_view pattern) {
  size_t from = 0;
  while (!pattern.empty()) {
    const size_t star = pattern.find('*');
    const std::string_view piece = pattern.substr(0, star);
    const size_t at = text.find(piece, from);
    if (at == std::string_view::npos) return false;
    from = at + piece.size();
    if (star == std::string_view::npos) break;
    pattern.remove_prefix(star + 1);
  }
  return true;
}

bool matches(const FrameworkCall& call, const Frame& frame) {
  const bool python = is_python_frame(frame);
  if (call.file.empty()) return !python && contains(frame.function, call.function);
  return python && frame.function == call.function &&
         frame.file.find(call.file) != std::string::npos;
}

}  // namespace

std::span<const FrameworkCall> framework_calls() { return kCalls; }

const FrameworkCall* framework_call_of(const Location& location) {
  const auto& frames = location.frames;
  if (frames.empty()) return nullptr;
  const size_t user =
      location.user_frame >= 0 ? static_cast<size_t>(location.user_frame) : frames.size();
  for (size_t i = user; i-- > 0;) {  // from the user frame toward CUDA
    for (const FrameworkCall& call : kCalls)
      if ((call.kind == FrameworkCallKind::Native || call.kind == FrameworkCallKind::Python) &&
          matches(call, frames[i]))
        return &call;
  }
  for (const Frame& frame : frames)
    for (const FrameworkCall& call : kCalls)
      if (call.kind == FrameworkCallKind::FirstUse && matches(call, frame)) return &call;
  return nullptr;
}

const FrameworkCall* capture_aware_call(const Location& location) {
  for (const Frame& frame : location.frames)
    for (const FrameworkCall& call : kCalls)
      if (call.kind == FrameworkCallKind::CaptureAware && matches(call, frame)) return &call;
  return nullptr;
}

void name_framework_calls(Report& report) {
  for (Finding& finding : report.findings) {
    const FrameworkCall* call = framework_call_of(finding.location);
    if (call == nullptr) continue;
    finding.framework_call = std::string(call->words);
    finding.framework_fix = std::string(call->fix);
  }
  for (RehearsalInfo& rehearsal : report.rehearsals)
    for (auto* items : {&rehearsal.warmup, &rehearsal.breaks})
      for (RehearsalItem& item : *items)
        if (const FrameworkCall* call = framework_call_of(item.location))
          item.first_use = std::string(call->words);
}

}  // namespace capguard
