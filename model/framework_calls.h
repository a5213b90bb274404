// What the user wrote, when a finding's stack shows it (model/framework_calls.def, one list).
#pragma once

#include <span>
#include <string_view>

#include "model/report.h"

namespace capguard {

enum class FrameworkCallKind { Native, Python, FirstUse, CaptureAware };

struct FrameworkCall {
  FrameworkCallKind kind;
  std::string_view function;
  std::string_view file;
  std::string_view words;  // "Tensor.item()"
  std::string_view rules;  // space-separated rule ids
  std::string_view fix;
};

std::span<const FrameworkCall> framework_calls();
// The entry point closest to the user frame between it and CUDA, else a first use anywhere in
// the stack; null when the stack shows none (or is not symbolized).
const FrameworkCall* framework_call_of(const Location& location);
// Capture-aware code on the stack: what it does eagerly it would do otherwise under a capture
// (an allocator in relaxed mode while its stream captures, a capture's own set-up).
const FrameworkCall* capture_aware_call(const Location& location);
// Names them in every finding (Finding::framework_call and framework_fix) and every rehearsal
// item (RehearsalItem::first_use).
void name_framework_calls(Report& report);

}  // namespace capguard
