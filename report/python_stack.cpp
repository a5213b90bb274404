#include "report/python_stack.h"

#include <fmt/format.h>

#include "model/frame_owner.h"
#include "util/base_name.h"
#include "util/cpp_names.h"

namespace capguard {
namespace {

// Library Python code folded into one named step wherever it runs: its frames say
// nothing a user acts on. A frame under none of these is shown by name.
struct PythonGroup {
  std::string_view path;  // a substring of the file
  std::string_view name;
};
constexpr PythonGroup kPythonGroups[] = {
    {"torch/_dynamo/", "torch.compile"},
    {"torch/_inductor/", "torch.compile"},
    {"torch/_functorch/", "torch.compile"},
    {"torch/fx/", "torch.compile"},
    {"torch/_higher_order_ops/", "torch.compile"},
    {"torch/_subclasses/", "torch.compile"},
    {"torch/_prims", "torch.compile"},
    {"torch/_decomp/", "torch.compile"},
    {"torch/_refs/", "torch.compile"},
    {"torch/nn/modules/", "nn.Module"},
    {"torch/nn/parallel/", "nn.Module"},
    {"triton/", "Triton runtime"},
    {"jax/_src/", "JAX"},
    {"jaxlib/", "JAX"},
    {"_pytest/", "pytest"},
    {"pluggy/", "pytest"},
    {"unittest/", "unittest"},
};

bool is_folding_group(std::string_view group) { return !group.empty(); }

// The text report's 120 columns less the via line's "      → ".
constexpr size_t kViaWidth = 112;

size_t text_columns(std::string_view text) {  // code points: "→" and "…" are one column
  size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  return n;
}

}  // namespace

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
  while (name.starts_with('_')) name.remove_prefix(1);  // __triton_launcher.so
  if (name.starts_with("lib")) name.remove_prefix(3);
  const size_t end = name.find_first_of("._-");
  name = name.substr(0, end);
  return name.empty() ? std::string("native code") : std::string(name);
}

namespace {

// Cython's C names ("__pyx_pw_4cupy_4cuda_6stream_11_BaseStream_19synchronize"): length-prefixed
// components, the last one after its index; "_BaseStream.synchronize". Empty if not one.
std::string cython_name(std::string_view function) {
  function = function.substr(0, function.find('('));  // demangled: its parameters follow
  size_t at = function.find('_', 6);  // past "__pyx_" and its kind ("pw", "pf", "f")
  if (!function.starts_with("__pyx_") || at == std::string_view::npos) return {};
  std::string_view rest = function.substr(at + 1);
  std::vector<std::string_view> parts;
  while (!rest.empty()) {
    size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    size_t length = 0;
    for (size_t i = 0; i < digits && length < 1000; ++i) length = length * 10 + (rest[i] - '0');
    if (digits == 0 || digits + length > rest.size() ||
        (digits + length < rest.size() && rest[digits + length] != '_')) {
      parts.push_back(rest.substr(digits));  // the function: its index, then its name
      break;
    }
    parts.push_back(rest.substr(digits, length));
    rest.remove_prefix(std::min(rest.size(), digits + length + 1));
  }
  if (parts.empty() || parts.back().empty()) return {};
  return parts.size() == 1 ? std::string(parts.back())
                           : fmt::format("{}.{}", parts[parts.size() - 2], parts.back());
}

}  // namespace

std::string brief_function_name(std::string_view function) {
  if (std::string cython = cython_name(function); !cython.empty()) return cython;
  const std::string shortened = short_function_name(function, true);
  std::string_view name = shortened;
  // The components at depth 0 (outside <…>, (…) and {…}), split at spaces and "::".
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<' || c == '(' || c == '{') ++depth;
    if ((c == '>' || c == ')' || c == '}') && depth > 0) --depth;
    if (depth != 0) continue;
    if (c == ' ') {  // a return type before it: start again
      start = i + 1;
      parts.clear();
    } else if (c == ':' && i + 1 < name.size() && name[i + 1] == ':') {
      parts.push_back(name.substr(start, i - start));
      start = i + 2;
      ++i;
    }
  }
  const std::string_view last = name.substr(start);
  if (parts.empty()) return std::string(last.empty() ? name : last);
  // The class, not a namespace: it has a capital letter or an underscore (cpp_function).
  const std::string_view owner = parts.back();
  const bool is_class = owner.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != std::string::npos &&
                        !owner.starts_with('(');
  return is_class ? fmt::format("{}::{}", owner, last) : std::string(last);
}

std::string_view python_group_of(const Frame& frame) {
  if (generated_by(frame.file) == GeneratedBy::TorchCompile) return "torch.compile";  // its code
  for (const PythonGroup& group : kPythonGroups)
    if (frame.file.find(group.path) != std::string::npos) return group.name;
  return {};
}

std::string display_path(std::string_view file, std::string_view source_root,
                         std::string_view script_dir) {
  for (std::string_view marker : {"site-packages/", "dist-packages/"}) {
    const size_t at = file.rfind(marker);
    if (at != std::string_view::npos) return std::string(file.substr(at + marker.size()));
  }
  // The standard library: /usr/lib/python3.12/unittest/case.py -> unittest/case.py.
  if (const size_t at = file.find("/lib/python3."); at != std::string_view::npos) {
    const size_t slash = file.find('/', at + 13);
    if (slash != std::string_view::npos) return std::string(file.substr(slash + 1));
  }
  for (std::string_view root : {source_root, script_dir}) {
    if (root.empty()) continue;
    while (root.size() > 1 && root.ends_with('/')) root.remove_suffix(1);
    if (file.size() > root.size() + 1 && file.starts_with(root) && file[root.size()] == '/')
      return std::string(file.substr(root.size() + 1));
  }
  return std::string(file);
}

std::string script_dir_of(const Location& location) {
  for (size_t i = location.frames.size(); i-- > 0;) {
    const Frame& frame = location.frames[i];
    if (!is_python_user_frame(frame) || !frame.file.starts_with('/')) continue;
    return frame.file.substr(0, frame.file.rfind('/'));
  }
  return {};
}

PythonStackView python_stack_view(const Location& location, size_t first, size_t last) {
  const auto& frames = location.frames;
  PythonStackView view;
  // Without a user frame (a thread a framework started), all of [first, last) is the way in.
  view.user = location.user_frame >= 0 ? static_cast<size_t>(location.user_frame) : last;
  // How the user frame reached CUDA, in call order: from view.user - 1 down to `first`.
  // torch.compile's frames fold with everything between them (nn.Module, PyTorch's glue): from
  // the outermost frame inside the user's to the innermost of torch.compile's, one step.
  size_t compile_end = view.user;  // frames (compile_end, view.user) fold into "torch.compile"
  for (size_t i = first; i < view.user; ++i)
    if (is_python_frame(frames[i]) && python_group_of(frames[i]) == "torch.compile") {
      compile_end = i;
      break;
    }
  // Each step in full and short (a via line past kViaWidth is said in the short ones).
  std::vector<std::string> steps, brief;
  size_t i = view.user;
  if (compile_end < view.user) {
    size_t python = 0;
    for (size_t k = compile_end; k < view.user; ++k) {
      if (is_interpreter_frame(frames[k]))
        ++view.interpreter;
      else if (is_python_frame(frames[k]))
        ++python;
      else
        ++view.folded_native;
    }
    view.folded_python += python;
    steps.push_back(fmt::format("torch.compile ({} frames)", python));
    brief.push_back(steps.back());
    i = compile_end;
  }
  while (i > first) {
    --i;
    const Frame& frame = frames[i];
    if (is_interpreter_frame(frame)) {
      ++view.interpreter;
      continue;
    }
    if (is_python_exception_frame(frame)) continue;  // said by its finding, not a frame
    if (is_python_frame(frame)) {
      // A run of library Python frames of one group (or of no group: shown by name).
      const std::string_view group = python_group_of(frame);
      const size_t outermost = i;
      size_t innermost = i, count = 1;
      while (innermost > first) {
        const Frame& next = frames[innermost - 1];
        if (is_interpreter_frame(next)) {
          --innermost;
          ++view.interpreter;
          continue;
        }
        if (!is_python_frame(next) || is_python_exception_frame(next) ||
            python_group_of(next) != group)
          break;
        --innermost;
        ++count;
      }
      i = innermost;
      const std::string from = frames[outermost].function, to = frames[innermost].function;
      if (is_folding_group(group)) {
        view.folded_python += count;
        steps.push_back(fmt::format("{} ({} frame{})", group, count, count == 1 ? "" : "s"));
      } else if (count == 1) {
        steps.push_back(from);
      } else if (count == 2) {
        steps.push_back(from + " → " + to);
      } else {
        view.folded_python += count - 2;
        steps.push_back(fmt::format("{} → {} ({} frames)", from, to, count));
      }
      brief.push_back(is_folding_group(group) ? steps.back() : from);
      continue;
    }
    // A run of one library's native frames (interpreter frames inside it do not break it).
    const size_t outermost = i;
    const std::string library = library_of(frames[outermost]);
    size_t innermost = i, count = 1;
    while (innermost > first && !is_python_frame(frames[innermost - 1])) {
      if (!is_interpreter_frame(frames[innermost - 1]) &&
          library_of(frames[innermost - 1]) != library)
        break;
      --innermost;
      if (is_interpreter_frame(frames[innermost])) {
        ++view.interpreter;
      } else {
        ++count;
      }
    }
    i = innermost;
    view.folded_native += count;
    std::string from = brief_function_name(frames[outermost].function);
    const std::string to = brief_function_name(frames[innermost].function);
    // Binding glue says nothing: pybind11's dispatcher, PyTorch's operator wrappers.
    for (std::string_view glue : {"cpp_function::dispatcher", "TypeError_to_NotImplemented_"})
      if (from.find(glue) != std::string::npos) from.clear();
    const std::string_view name = to.empty() ? from : to;
    const std::string frames_note = count == 1 ? std::string() : fmt::format(" ({} frames)", count);
    if (name.empty())
      steps.push_back(fmt::format("{} ({} frame{})", library, count, count == 1 ? "" : "s"));
    else if (from.empty() || to.empty() || from == to)
      steps.push_back(fmt::format("{}: {}{}", library, name, frames_note));
    else
      steps.push_back(fmt::format("{}: {} → {}{}", library, from, to, frames_note));
    brief.push_back(name.empty() ? steps.back() : fmt::format("{}: {}", library, name));
  }
  for (const std::string& step : steps) view.via += (view.via.empty() ? "" : " → ") + step;
  if (text_columns(view.via) > kViaWidth) {
    view.via.clear();
    for (const std::string& step : brief) view.via += (view.via.empty() ? "" : " → ") + step;
  }
  // The callers: Python frames and the native frames of a program's own code; a run of a
  // library's Python frames (pytest, unittest) folded into one line, frameworks' native glue
  // between two Python frames folded, the interpreter left out.
  for (size_t k = view.user + 1; k < last; ++k) {
    const Frame& frame = frames[k];
    if (is_interpreter_frame(frame)) {
      ++view.interpreter;
    } else if (is_python_frame(frame) && !is_python_user_frame(frame)) {
      const std::string_view group = python_group_of(frame);
      std::string name(group);
      if (name.empty()) {  // the package: torch/cuda/graphs.py -> torch
        name = display_path(frame.file, "", "");
        name = name.substr(0, name.find('/'));
      }
      if (!view.callers.empty() && view.callers.back().group == name) {
        ++view.callers.back().count;
      } else {
        view.callers.push_back({k, name, 1});
      }
    } else if (is_python_frame(frame) || owner_of(frame) == FrameOwner::Program) {
      view.callers.push_back({k, {}});
    } else {
      ++view.folded_native;
    }
  }
  for (const PythonCaller& caller : view.callers)
    if (caller.count > 1) view.folded_python += caller.count;
  return view;
}

}  // namespace capguard
