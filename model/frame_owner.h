// Whose code a frame is: CUDA itself, capguard, the C runtime, a library the program uses, or
// the program. Judged from paths, not from a list of library names: code is a library's when
// its source file lies under the CUDA toolkit's or the system's include directories (Thrust,
// CUB, libcu++ and libstdc++ headers compiled into the program), under site-packages, or in
// Python's standard library; or when its module is a shared library installed outside the
// user's tree (system library directories, the toolkit, site-packages such as
// torch/lib/libtorch_cuda.so). Users say what their code is where this guesses wrong with
// --user-code globs. The user frame is the innermost frame of the program's own code.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/report.h"

namespace capguard {

// Cuda: the driver, the runtime (shared, or static inside the executable) and CUPTI.
// Library: any other code the program did not write (see above). Unknown: nothing is known.
enum class FrameOwner { Program, Library, Cuda, Interposer, Runtime, Unknown };

// Python frames (trace format 2) are Frames with module kPythonModule and address 0.
inline constexpr char kPythonModule[] = "python";
bool is_python_frame(const Frame& frame);
// The interposer's pseudo frame naming the Python exception a thread handled when it ended a
// capture (trace::kPythonExceptionFile): a Python frame of nobody's code, never shown as a frame.
bool is_python_exception_frame(const Frame& frame);

// What the user says their code is (--user-code GLOB, repeatable). A glob is matched against a
// frame's source file and its module: '*' any run of characters (including '/'), '?' one
// character; without '/' it is matched against the base name; a relative glob is taken relative
// to the source root; a glob without '*' or '?' also names everything under it (a directory).
class UserCode {
 public:
  UserCode() = default;
  UserCode(const std::vector<std::string>& globs, const std::string& source_root);
  bool empty() const { return globs_.empty(); }
  bool matches(const Frame& frame) const;

 private:
  std::vector<std::string> globs_;
};

// The default judgement, from paths alone.
FrameOwner owner_of(const Frame& frame);
bool is_library_source(std::string_view file);       // a header or Python file of a library
bool is_installed_library(std::string_view module);  // a shared library outside the user's tree

// Code that torch.compile (Inductor) or Triton wrote at run time, wherever their caches are
// (TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR move them; vLLM and containers do): by the
// default cache folders' names, and by the files' own names, which nobody else writes.
enum class GeneratedBy { None, TorchCompile, Triton };
GeneratedBy generated_by(std::string_view path);

// CPython's own native code (python3.x or libpython3.x), not a Python frame.
bool is_interpreter_frame(const Frame& frame);

// What a frame is, for machine readers (JSON and SARIF mark every frame): "user" (the program's
// own code, Python or native), "python" (a library's Python code), "interpreter" (CPython),
// "framework" (a library's native code: libtorch, cupy, cuBLAS), "tool" (capguard and CUPTI),
// "toolkit" (the CUDA driver and runtime), "system" (the C runtime, or nothing known).
const char* frame_kind(const Frame& frame);

// A Python frame of the program's own code (not site-packages, the standard library, <frozen>).
bool is_python_user_frame(const Frame& frame);

// Index of the innermost frame of the program's own code; -1 when there is none. Frames of
// CUDA and capguard never are; when `user` names code, the innermost frame it matches wins,
// and the default judgement decides only when no frame matches.
int choose_user_frame(const std::vector<Frame>& frames, const UserCode& user = {});

// Index of the first frame past the innermost run of CUDA and capguard frames (and nvcc's
// <<<>>> launch stub and wrapper): where a report starts showing how the call reached CUDA.
size_t first_frame_outside_cuda(const std::vector<Frame>& frames);

}  // namespace capguard
