// The Python-first view of a stack that has Python frames (text report): the user's line first,
// then how it reached CUDA in one line (library Python frames by name, each run of a framework's
// native frames folded to its library and its outermost and innermost function), then the
// callers. CPython's interpreter frames are never shown; `--native-frames` shows every frame.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/report.h"
#include "util/cpp_names.h"  // short_function_name, used with these

namespace capguard {

bool has_python_frames(const Location& location);

// The library a native frame belongs to, in the user's words: the package under site-packages
// ("torch", "cupy", "jaxlib"), else the module's name without lib and version ("cublas").
std::string library_of(const Frame& frame);

struct PythonStackView {
  size_t user = 0;              // index of the user frame (shown first, with its source)
  std::string via;              // "graph.__enter__ (graphs.py:257) → torch: a → b (3 frames)"
  std::vector<size_t> callers;  // indexes of the frames shown after it, innermost first
  size_t folded = 0;            // native framework frames folded into `via` or between callers
  size_t interpreter = 0;       // CPython frames left out
};
// For a location with a user frame among frames [first, last) (frames_to_show's range).
PythonStackView python_stack_view(const Location& location, size_t first, size_t last);

}  // namespace capguard
