// Offline symbolization: turns the raw return addresses recorded in a trace into function,
// file:line and module, using the module map recorded by the same process (elfutils libdw,
// DWARF line tables first, ELF symbol tables when there is no DWARF). Then picks each
// location's user frame: the first frame that belongs to the program rather than to CUDA,
// capguard's interposer or the C/C++ runtime.
#pragma once

#include <vector>

#include "analyzer/modules.h"
#include "analyzer/report.h"
#include "analyzer/symbol_cache.h"

namespace capguard {

// Fills Location::frames (from Location::addresses, when any were recorded) and
// Location::user_frame for every location in the report: findings, their related locations,
// and the captures' begin and end. A module whose file is missing or whose build-id differs
// from the recorded one yields frames with module and offset only, unless `cache` (frames
// resolved earlier, on the machine that recorded the trace) knows the address.
void symbolize(Report& report, const std::vector<ProcessModules>& modules,
               const SymbolCache* cache = nullptr);

// Who a frame belongs to, judged from its module path and function name.
enum class FrameOwner { Program, Cuda, Interposer, Runtime, Unknown };
FrameOwner owner_of(const Frame& frame);

// Index of the first (innermost) frame owned by the program; -1 when there is none. In a
// stack with Python frames, the innermost Python frame of the program's own code wins (see
// is_python_user_frame): the native frames of a Python program are the framework's.
int choose_user_frame(const std::vector<Frame>& frames);

// Python frames (trace format 2) are Frames with module kPythonModule and address 0.
inline constexpr char kPythonModule[] = "python";
bool is_python_frame(const Frame& frame);
// A Python frame of the program's own code: not in a framework package under site-packages
// or dist-packages (torch, cupy, jax, jaxlib, numpy, triton ...), not in the standard library
// (.../lib/python3.X/), and not frozen ("<frozen runpy>").
bool is_python_user_frame(const Frame& frame);
// Puts a stack's Python frames (innermost first) where the interpreter runs them: before the
// first native frame of the interpreter (a python3.X executable or libpython), or after all
// native frames when none is seen (an unsymbolized or clamped stack).
void interleave_python_frames(std::vector<Frame>& native, const std::vector<Frame>& python);

}  // namespace capguard
