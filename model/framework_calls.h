// What the user wrote, when a finding's stack shows it (model/framework_calls.def, one list).
#pragma once

#include <span>
#include <string_view>

#include "model/report.h"

namespace capguard {

enum class FrameworkCallKind {
  Native,
  Python,
  FirstUse,
  CaptureAware,
  Thread,
  Release,
  Raised,
  Owner
};

struct FrameworkCall {
  FrameworkCallKind kind;
  std::string_view function;
  std::string_view file;
  std::string_view words;  // "Tensor.item()"
  std::string_view rules;  // space-separated rule ids
  std::string_view fix;
};

std::span<const FrameworkCall> framework_calls();

// Whose code a finding's culprit is, for the fix's words (model/framework_fixes.def).
enum class Framework { None, PyTorch, TorchCompile, CuPy, JAX, Triton };
std::string_view framework_name(Framework framework);  // "PyTorch", "torch.compile", ...
// From the frames between the user's line and CUDA (torch.compile's Python frames anywhere in
// the stack); on a thread without a user frame, the whole stack. None for a stack without
// Python frames or a framework's code (a C++ program: the rule's CUDA words).
Framework framework_of(const Location& location);

struct FrameworkFix {
  Framework framework;
  std::string_view rule;
  std::string_view headline;  // "" for none
  std::string_view fix;
};
std::span<const FrameworkFix> framework_fixes();
// `rule`'s fix in `framework`'s words (torch.compile falls back to PyTorch's); null for none.
const FrameworkFix* framework_fix(Framework framework, std::string_view rule);
// The entry point closest to the user frame between it and CUDA, else a first use anywhere in
// the stack; null when the stack shows none (or is not symbolized).
const FrameworkCall* framework_call_of(const Location& location);
// Capture-aware code on the stack: what it does eagerly it would do otherwise under a capture
// (an allocator in relaxed mode while its stream captures, a capture's own set-up).
const FrameworkCall* capture_aware_call(const Location& location);
// The thread a framework started, when the stack runs in one (Thread entries); null otherwise.
const FrameworkCall* framework_thread_of(const Location& location);
// What gave memory back, when a release's stack shows it (Release entries); null otherwise.
const FrameworkCall* release_call_of(const Location& location);
// Who keeps memory a graph holds, when its allocation's stack shows it (Owner entries, the first
// that matches); null otherwise.
const FrameworkCall* memory_owner_of(const Location& allocation);
// Names the owner (and pool) of each held-memory row of the lifecycle table (HeldMemory) and
// merges the rows that then say the same: one per owner and pool, and for memory the program
// allocated itself one per allocating call and user line. After symbolization.
void name_held_memory(Report& report);
// Names them in every finding (Finding::framework_call and framework_fix, else the rule's fix in
// the framework's words: a message's own "Fix: ..." then gives way to it) and every rehearsal
// item (RehearsalItem::first_use). A finding without a user frame is given its thread's words
// (Finding::thread_name) and keeps its "started-by" related location only when that one has a
// user frame (the user line that started the thread's work); every other finding drops it. Names
// the held memory's owners too (name_held_memory).
void name_framework_calls(Report& report);

}  // namespace capguard
