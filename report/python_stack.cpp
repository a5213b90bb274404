#include "report/python_stack.h"

#include <fmt/format.h>

#include "model/frame_owner.h"
#include "util/base_name.h"
#include "util/cpp_names.h"

namespace capguard {

bool has_python_frames(const Location& location) {
  for (const Frame& frame : location.frames)
    if (is_python_frame(frame)) return true;
  return false;
}

std::string library_of(const Frame& frame) {
  const std::string_view module = frame.module;
  for (std::string_view marker : {"site-packages/", "dist-packages/"}) {
    const size_t at = module.rfind(marker);
    if (at == std::string_view::npos) continue;
    std::string_view rest = module.substr(at + marker.size());
    const std::string_view package = rest.substr(0, rest.find('/'));
    if (package == "nvidia") {  // nvidia/cu13/lib/libcublas.so.13: the library's own name
      break;
    }
    return std::string(package.substr(0, package.find('.')));
  }
  std::string_view name = base_name(module);
  if (name.starts_with("lib")) name.remove_prefix(3);
  const size_t end = name.find_first_of("._-");
  return std::string(name.substr(0, end));
}

PythonStackView python_stack_view(const Location& location, size_t first, size_t last) {
  const auto& frames = location.frames;
  PythonStackView view;
  view.user = location.user_frame >= 0 ? static_cast<size_t>(location.user_frame) : first;
  // How the user frame reached CUDA, in call order: from the frame just inside the user's
  // outward... that is, from view.user - 1 down to `first`.
  std::vector<std::string> steps;
  size_t i = view.user;
  while (i > first) {
    --i;
    const Frame& frame = frames[i];
    if (is_interpreter_frame(frame)) {
      ++view.interpreter;
      continue;
    }
    if (is_python_frame(frame)) {
      steps.push_back(fmt::format("{} ({}:{})", frame.function, base_name(frame.file), frame.line));
      continue;
    }
    // A run of native frames (interpreter frames inside it do not break it).
    const size_t outermost = i;
    size_t innermost = i, count = 1;
    while (innermost > first && !is_python_frame(frames[innermost - 1])) {
      --innermost;
      if (is_interpreter_frame(frames[innermost])) {
        ++view.interpreter;
      } else {
        ++count;
      }
    }
    i = innermost;
    view.folded += count;
    const std::string library = library_of(frames[outermost]);
    const std::string from = short_function_name(frames[outermost].function, true);
    const std::string to = short_function_name(frames[innermost].function, true);
    if (count == 1)
      steps.push_back(fmt::format("{}: {}", library, from));
    else
      steps.push_back(fmt::format("{}: {} → {} ({} frames)", library, from, to, count));
  }
  for (const std::string& step : steps) view.via += (view.via.empty() ? "" : " → ") + step;
  // The callers: Python frames and the native frames of a program's own code; frameworks'
  // native glue between two Python frames is folded, the interpreter left out.
  for (size_t k = view.user + 1; k < last; ++k) {
    const Frame& frame = frames[k];
    if (is_interpreter_frame(frame)) {
      ++view.interpreter;
    } else if (is_python_frame(frame) || owner_of(frame) == FrameOwner::Program) {
      view.callers.push_back(k);
    } else {
      ++view.folded;
    }
  }
  return view;
}

}  // namespace capguard
