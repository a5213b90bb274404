#include "model/frame_owner.h"

#include <array>
#include <span>

#include "trace/format.h"
#include "util/base_name.h"
#include "util/demangle.h"
#include "util/glob.h"

namespace capguard {
namespace {

bool starts_with_any(std::string_view text, std::span<const std::string_view> prefixes) {
  for (std::string_view prefix : prefixes)
    if (text.starts_with(prefix)) return true;
  return false;
}

bool matches_any(std::span<const std::string_view> globs, std::string_view path) {
  for (std::string_view glob : globs)
    if (glob_match(glob, path)) return true;
  return false;
}

// CUDA itself: the driver (and its helper libraries), the runtime and CUPTI. Every other CUDA
// library (cuBLAS, cuFFT, NCCL, cuDNN ...) is a library like any other, judged by its path.
constexpr std::array<std::string_view, 5> kCudaModules = {"libcuda.so", "libcudart", "libcupti",
                                                          "libnvidia-", "libnvperf"};
constexpr std::array<std::string_view, 1> kInterposerModules = {"libcapguard"};
// The C and C++ runtime: below main and around threads, never the user's code.
constexpr std::array<std::string_view, 10> kRuntimeModules = {
    "libc.so", "libc-",      "libstdc++", "libgcc_s", "ld-linux",
    "ld-",     "libpthread", "libdl",     "libm.so",  "librt"};
// Functions of a statically linked cudart (inside the executable).
constexpr std::array<std::string_view, 4> kCudartFunctionPrefixes = {
    "__cuda", "cudart::", "__cudart", "libcudart"};

// Where headers and Python files of code the user did not write live: the CUDA toolkit's and
// the system's include directories (a custom GCC's too), site-packages and Python's stdlib
// (the code torch.compile generates: generated_by). CCCL's headers by their own folders
// too: CUDA 12 toolkits keep them as include/cub, include/thrust and include/cuda (libcu++)
// wherever the toolkit was installed (/opt/cuda-12.4, a module tree), 13 as include/cccl.
constexpr std::array<std::string_view, 19> kLibrarySources = {
    "/usr/include/*",    "/usr/local/include/*",  "/usr/lib/*",      "/usr/lib64/*",
    "/usr/local/lib/*",  "/usr/local/cuda*",      "/opt/nvidia/*",   "/opt/conda/*",
    "/nix/store/*",      "*/include/cccl/*",      "*/include/cub/*", "*/include/thrust/*",
    "*/include/cuda/*",  "*/targets/*/include/*", "*/include/c++/*", "*/site-packages/*",
    "*/dist-packages/*", "*/lib*/python3.*",      "<frozen*"};

// Where shared libraries installed outside the user's tree live: system-wide directories, the
// software stacks of GPU clusters and containers (NGC's MPI and UCX, HPC-X, AWS's EFA and NCCL
// plugin, Cray's MPI with its CUDA transport, Spack's and the cluster manager's trees), ...
// clang-format off
constexpr std::array<std::string_view, 19> kSystemLibraryDirs = {
    "/lib/*", "/lib32/*", "/lib64/*", "/usr/lib*", "/usr/local/lib*", "/usr/local/cuda*",
    "/usr/local/nvidia/*", "/opt/nvidia/*", "/opt/conda/*", "/nix/store/*", "/snap/*",
    "/usr/local/mpi/*", "/usr/local/ucx/*", "/opt/hpcx/*", "/opt/amazon/*", "/opt/cray/*",
    "/opt/intel/*", "*/spack/opt/spack/*", "/cm/shared/*"};
// clang-format on
// NVIDIA's CUDA libraries, by name wherever a module system put them (an HPC site's
// /apps/cuda/12.4/lib64/libcublas.so.12): closed source but NCCL, whose developers say what
// their code is with --user-code.
constexpr std::array<std::string_view, 16> kNvidiaLibraries = {
    "libcublas", "libcufft",  "libcurand",    "libcusparse", "libcusolver",   "libnccl",
    "libcudnn",  "libnvrtc",  "libnvJitLink", "libcutensor", "libnvToolsExt", "libnpp",
    "libnvjpeg", "libcufile", "libnvshmem",   "libnvinfer"};
// ... and wherever package managers put them (a Python's own extension modules too, wherever
// pyenv or uv put it); Triton's and TorchInductor's launchers: generated_by.
constexpr std::array<std::string_view, 6> kPackageLibraryDirs = {
    "*/site-packages/*", "*/dist-packages/*",  "*/lib*/python3.*",
    "*conda*/lib/*",     "*/miniforge*/lib/*", "*/mambaforge*/lib/*"};

// capguard's own Python code: its start-up module (python/capguard_python_startup), whose CuPy
// pool hook calls into libcapguard.so.
constexpr std::string_view kCapguardPythonSources = "*/capguard_python_startup/*";

bool all_in(std::string_view text, std::string_view alphabet) {
  return text.find_first_not_of(alphabet) == std::string_view::npos;
}
constexpr std::string_view kLowerBase32 = "abcdefghijklmnopqrstuvwxyz234567";
constexpr std::string_view kKeyLetters =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";

// Inductor names what it writes "c" and 51 letters of base32 (a-z, 2-7) of the code's hash,
// with the extension of its kind (torch/_inductor/codecache.py, code_hash and get_path).
bool is_inductor_file_name(std::string_view name) {
  constexpr size_t kHashLength = 52;
  const size_t dot = name.rfind('.');
  if (dot != kHashLength || name[0] != 'c') return false;
  const std::string_view extension = name.substr(dot);
  return (extension == ".py" || extension == ".so" || extension == ".cpp") &&
         all_in(name.substr(1, kHashLength - 1), kLowerBase32);
}

// The modules Triton compiles into its cache: a launcher for every kernel, and once its driver
// helpers, a name common enough to count only in a folder named by a hash (Triton's cache keys:
// 64 hex digits, or 52 letters of base32).
constexpr std::string_view kTritonLauncher = "__triton_launcher.so";
constexpr std::string_view kTritonDriverUtils = "cuda_utils.so";

bool is_in_hash_folder(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return false;
  const std::string_view folder = base_name(path.substr(0, slash));
  return folder.size() >= 32 && all_in(folder, kKeyLetters);
}

bool is_static_cudart_or_driver(std::string_view function) {
  if (starts_with_any(function, kCudartFunctionPrefixes)) return true;
  // cudaMalloc, cudaStreamSynchronize (static cudart); cuInit, cuMemAlloc_v2 (driver entry
  // points): "cuda" or "cu", then an upper-case letter. Not libcu++'s cuda::std::...
  const size_t at = function.starts_with("cuda") ? 4 : function.starts_with("cu") ? 2 : 0;
  return at > 0 && function.size() > at && function[at] >= 'A' && function[at] <= 'Z';
}

// nvcc turns `kernel<<<...>>>(args)` into a call to a host wrapper named like the kernel, which
// calls a generated __device_stub__<mangled kernel>, which calls cudaLaunchKernel. Neither is
// the user's line: the launch is one frame further out.
constexpr std::string_view kStubPrefix = "__device_stub__";

bool is_launch_stub(const Frame& frame) {
  return frame.function.starts_with(kStubPrefix) || frame.file.ends_with(".cudafe1.stub.c");
}

// The kernel's host wrapper sits right outside its stub: "__device_stub__Z6kernelPf(...)"
// belongs to the wrapper "_Z6kernelPf", demangled "kernel(float*)".
bool is_wrapper_of(const Frame& stub, const Frame& outer) {
  if (!stub.function.starts_with(kStubPrefix)) return false;
  std::string_view mangled = std::string_view(stub.function).substr(kStubPrefix.size());
  mangled = mangled.substr(0, mangled.find('('));
  return !mangled.empty() && demangle(("_" + std::string(mangled)).c_str()) == outer.function;
}

// Frames of nvcc's launch machinery at i (the stub, and the wrapper right outside it): 0 if none.
size_t launch_frames_at(const std::vector<Frame>& frames, size_t i) {
  if (!is_launch_stub(frames[i])) return 0;
  return i + 1 < frames.size() && is_wrapper_of(frames[i], frames[i + 1]) ? 2 : 1;
}

bool is_cuda_or_capguard(FrameOwner owner) {
  return owner == FrameOwner::Cuda || owner == FrameOwner::Interposer;
}

// The innermost frame that `pred` accepts, never nvcc's launch stub or wrapper; -1 if none.
template <typename Pred>
int innermost(const std::vector<Frame>& frames, Pred pred) {
  for (size_t i = 0; i < frames.size();) {
    if (const size_t launch = launch_frames_at(frames, i); launch > 0) {
      i += launch;
    } else if (pred(frames[i])) {
      return static_cast<int>(i);
    } else {
      ++i;
    }
  }
  return -1;
}

}  // namespace

bool is_python_frame(const Frame& frame) { return frame.module == kPythonModule; }

bool is_python_exception_frame(const Frame& frame) {
  return is_python_frame(frame) && frame.file == trace::kPythonExceptionFile;
}

UserCode::UserCode(const std::vector<std::string>& globs, const std::string& source_root) {
  for (const std::string& glob : globs) {
    if (glob.empty()) continue;
    std::vector<std::string> forms = {glob};
    const bool relative = glob.find('/') != std::string::npos && glob[0] != '/' && glob[0] != '*';
    if (relative && !source_root.empty()) {
      std::string root = source_root;
      while (root.size() > 1 && root.back() == '/') root.pop_back();
      forms.push_back(root + "/" + (glob.starts_with("./") ? glob.substr(2) : glob));
    }
    const bool plain = glob.find_first_of("*?") == std::string::npos;
    for (const std::string& form : forms) {
      globs_.push_back(form);
      if (plain && form.find('/') != std::string::npos)  // a directory: everything under it
        globs_.push_back(form + (form.ends_with("/") ? "*" : "/*"));
    }
  }
}

bool UserCode::matches(const Frame& frame) const {
  for (const std::string& glob : globs_) {
    if (path_matches(glob, frame.file)) return true;
    if (!is_python_frame(frame) && path_matches(glob, frame.module)) return true;
  }
  return false;
}

GeneratedBy generated_by(std::string_view path) {
  const std::string_view name = base_name(path);
  // torch.fx's GraphModule code (torch/fx/graph_module.py: "<eval_with_key>.3", since 2.1 with
  // " from /work/model.py:12 in forward" after it) is the traced graph, not a line the user wrote.
  if (is_inductor_file_name(name) || glob_match("*/torchinductor_*", path) ||
      path.starts_with("<eval_with_key>"))
    return GeneratedBy::TorchCompile;
  if (name == kTritonLauncher || (name == kTritonDriverUtils && is_in_hash_folder(path)))
    return GeneratedBy::Triton;
  if (glob_match("*/.triton/cache/*", path)) return GeneratedBy::Triton;
  return GeneratedBy::None;
}

bool is_library_source(std::string_view file) {
  return matches_any(kLibrarySources, file) || generated_by(file) != GeneratedBy::None;
}

bool is_installed_library(std::string_view module) {
  const std::string_view name = base_name(module);
  return name.find(".so") != std::string_view::npos &&
         (matches_any(kSystemLibraryDirs, module) || matches_any(kPackageLibraryDirs, module) ||
          starts_with_any(name, kNvidiaLibraries) || generated_by(module) != GeneratedBy::None);
}

FrameOwner owner_of(const Frame& frame) {
  if (is_python_frame(frame)) {
    if (frame.file.empty() || frame.file == trace::kPythonExceptionFile) return FrameOwner::Unknown;
    if (glob_match(kCapguardPythonSources, frame.file)) return FrameOwner::Interposer;
    return is_library_source(frame.file) ? FrameOwner::Library : FrameOwner::Program;
  }
  const std::string_view module = base_name(frame.module);
  if (starts_with_any(module, kInterposerModules)) return FrameOwner::Interposer;
  if (starts_with_any(module, kCudaModules)) return FrameOwner::Cuda;
  if (starts_with_any(module, kRuntimeModules)) return FrameOwner::Runtime;
  if (is_static_cudart_or_driver(frame.function)) return FrameOwner::Cuda;
  if (module.empty() && frame.function.empty()) return FrameOwner::Unknown;
  if (is_installed_library(frame.module)) return FrameOwner::Library;
  if (!frame.file.empty() && is_library_source(frame.file)) return FrameOwner::Library;
  return FrameOwner::Program;
}

bool is_python_user_frame(const Frame& frame) {
  return is_python_frame(frame) && owner_of(frame) == FrameOwner::Program;
}

int choose_user_frame(const std::vector<Frame>& frames, const UserCode& user) {
  if (!user.empty()) {
    const int named = innermost(frames, [&](const Frame& frame) {
      return !is_cuda_or_capguard(owner_of(frame)) && user.matches(frame);
    });
    if (named >= 0) return named;
  }
  return innermost(frames,
                   [](const Frame& frame) { return owner_of(frame) == FrameOwner::Program; });
}

size_t first_frame_outside_cuda(const std::vector<Frame>& frames) {
  size_t i = 0;
  while (i < frames.size()) {
    if (const size_t launch = launch_frames_at(frames, i); launch > 0) {
      i += launch;
      continue;
    }
    const FrameOwner owner = owner_of(frames[i]);
    if (!is_cuda_or_capguard(owner) && owner != FrameOwner::Unknown) break;
    ++i;
  }
  // capguard's Python hook calls in through ctypes: it and everything inside it are capguard's.
  for (size_t k = frames.size(); k-- > i;)
    if (is_python_frame(frames[k]) && owner_of(frames[k]) == FrameOwner::Interposer) return k + 1;
  return i;
}

bool is_interpreter_frame(const Frame& frame) {
  if (is_python_frame(frame)) return false;
  const std::string_view module = base_name(frame.module);
  return module.starts_with("python3") || module.starts_with("libpython3");
}

const char* frame_kind(const Frame& frame) {
  if (is_python_frame(frame))
    return is_python_user_frame(frame)                 ? "user"
           : owner_of(frame) == FrameOwner::Interposer ? "tool"
                                                       : "python";
  if (is_interpreter_frame(frame)) return "interpreter";
  if (base_name(frame.module).starts_with("libcupti")) return "tool";
  switch (owner_of(frame)) {
    case FrameOwner::Program:
      return "user";
    case FrameOwner::Library:
      return "framework";
    case FrameOwner::Cuda:
      return "toolkit";
    case FrameOwner::Interposer:
      return "tool";
    case FrameOwner::Runtime:
    case FrameOwner::Unknown:
      break;
  }
  return "system";
}

}  // namespace capguard
