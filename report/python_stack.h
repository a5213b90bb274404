// The Python-first view of a stack that has Python frames (text and HTML reports), as a Python
// user reads a traceback: the user's line first (numbered #0, no address), then how it reached
// CUDA in one line (a library's Python frames folded into one named step: "torch.compile (24
// frames)", "nn.Module (4 frames)"; each run of a framework's native frames folded to its
// library and its function's short name), then the callers. CPython's interpreter frames are
// never shown; `--native-frames` shows every frame.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/report.h"
#include "util/cpp_names.h"  // short_function_name, used with these

namespace capguard {

bool has_python_frames(const Location& location);

// The library a native frame belongs to, in the user's words: the package under site-packages
// ("torch", "cupy", "jaxlib"), else the module's name without lib and version ("cublas");
// "native code" when nothing names it.
std::string library_of(const Frame& frame);

// A C++ function's name as short as a via line wants it: no return type, template arguments or
// parameters, at most its class ("CUDAGraph::capture_begin", "THPVariable_add_").
std::string brief_function_name(std::string_view function);

// The group a library's Python frame folds into ("torch.compile", "nn.Module", "Triton
// runtime"); empty for frames shown by name (torch.cuda.graph's, a library's API).
std::string_view python_group_of(const Frame& frame);

// A Python file as the report shows it: a package's file from the package
// ("torch/_inductor/utils.py"), the standard library's from the library ("unittest/case.py"),
// the user's relative to `source_root` or else to `script_dir` when under them, else as is.
std::string display_path(std::string_view file, std::string_view source_root,
                         std::string_view script_dir);
// The directory of the program's script in this stack (its outermost user Python frame); "".
std::string script_dir_of(const Location& location);

struct PythonCaller {
  size_t frame = 0;   // index into the location's frames (the run's first, when folded)
  std::string group;  // a run of library Python frames: its name ("unittest"), else empty
  size_t count = 0;   // frames in that run; one is shown as a frame
};

struct PythonStackView {
  size_t user = 0;  // index of the user frame (shown first, with its source)
  std::string via;  // "torch.compile (24 frames) → graph.__enter__ → torch: ..."
  std::vector<PythonCaller> callers;  // shown after it, innermost first
  size_t folded_native = 0;           // framework native frames folded into `via` or callers
  size_t folded_python = 0;           // library Python frames folded into a named step
  size_t interpreter = 0;             // CPython frames left out
};
// For a location with a user frame among frames [first, last) (frames_to_show's range); for one
// without (a framework's thread), `via` folds all of [first, last) and `user` is `last`.
PythonStackView python_stack_view(const Location& location, size_t first, size_t last);

}  // namespace capguard
