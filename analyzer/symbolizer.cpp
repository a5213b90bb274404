#include "analyzer/symbolizer.h"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace capguard {
namespace {

std::string demangle(const char* name) {
  if (name == nullptr) return {};
  if (name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return name;
  std::string result(out);
  std::free(out);
  return result;
}

std::string to_hex(const unsigned char* bytes, int size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (int i = 0; i < size; ++i) {
    hex += kDigits[bytes[i] >> 4];
    hex += kDigits[bytes[i] & 0xf];
  }
  return hex;
}

bool same_build_id(std::string_view recorded_hex, const std::string& actual_hex) {
  if (recorded_hex.size() != actual_hex.size()) return false;
  for (size_t i = 0; i < actual_hex.size(); ++i) {
    char c = recorded_hex[i];
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    if (c != actual_hex[i]) return false;
  }
  return true;
}

const Dwfl_Callbacks kOfflineCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};

// One module of one process, opened lazily with its own Dwfl session (each process may map
// the same file at a different base).
class OpenModule {
 public:
  explicit OpenModule(const Module& module) {
    if (access(module.path.c_str(), R_OK) != 0) return;
    dwfl_ = dwfl_begin(&kOfflineCallbacks);
    if (dwfl_ == nullptr) return;
    dwfl_report_begin(dwfl_);
    handle_ =
        dwfl_report_elf(dwfl_, module.path.c_str(), module.path.c_str(), -1, module.base, false);
    dwfl_report_end(dwfl_, nullptr, nullptr);
    if (handle_ != nullptr && !module.build_id.empty()) {
      const unsigned char* bits = nullptr;
      GElf_Addr vaddr = 0;
      const int size = dwfl_module_build_id(handle_, &bits, &vaddr);
      // A rebuilt file at the same path would give confidently wrong names: use none.
      if (size <= 0 || !same_build_id(module.build_id, to_hex(bits, size))) handle_ = nullptr;
    }
  }
  ~OpenModule() {
    if (dwfl_ != nullptr) dwfl_end(dwfl_);
  }
  OpenModule(const OpenModule&) = delete;
  OpenModule& operator=(const OpenModule&) = delete;

  // Fills function, file and line for the instruction at `pc` (a runtime address).
  void describe(uint64_t pc, Frame& frame) const {
    if (handle_ == nullptr) return;
    GElf_Off offset = 0;
    GElf_Sym symbol{};
    frame.function =
        demangle(dwfl_module_addrinfo(handle_, pc, &offset, &symbol, nullptr, nullptr, nullptr));
    if (Dwfl_Line* line = dwfl_module_getsrc(handle_, pc)) {
      int line_number = 0;
      const char* file = dwfl_lineinfo(line, nullptr, &line_number, nullptr, nullptr, nullptr);
      if (file != nullptr && line_number > 0) {
        frame.file = file;
        frame.line = line_number;
      }
    }
  }

 private:
  Dwfl* dwfl_ = nullptr;
  Dwfl_Module* handle_ = nullptr;
};

class Symbolizer {
 public:
  Symbolizer(const std::vector<ProcessModules>& modules, const SymbolCache* cache)
      : modules_(modules), cache_(cache) {}

  // `process` (Finding::process) tells apart processes that share a pid; 0: by pid alone.
  void symbolize(Location& location, uint32_t pid, uint32_t process) {
    if (location.pid != 0) pid = location.pid;
    owner_ = find_process(pid, process);
    const uint64_t owner_key = process != 0 ? process : uint64_t{1} << 32 | pid;
    if (!location.addresses.empty()) {
      location.frames.clear();
      std::vector<Frame> python;
      for (uint64_t address : location.addresses) {
        if (is_python_frame_tag(address)) {
          python.push_back(python_frame(static_cast<uint32_t>(address)));
        } else {
          location.frames.push_back(frame(owner_key, pid, address));
        }
      }
      if (!python.empty()) interleave_python_frames(location.frames, python);
    }
    location.user_frame = choose_user_frame(location.frames);
  }

 private:
  Frame frame(uint64_t owner_key, uint32_t pid, uint64_t return_address) {
    auto [cached, inserted] = frames_.try_emplace({owner_key, return_address});
    if (!inserted) return cached->second;
    Frame& frame = cached->second;
    frame.address = return_address;
    resolve(frame);
    if (frame.function.empty() && frame.file.empty() && cache_ != nullptr) {
      if (const Frame* known = cache_->find(pid, return_address)) {
        const uint64_t offset = frame.offset;
        frame = *known;
        frame.offset = offset;
      }
    }
    return frame;
  }

  Frame python_frame(uint32_t id) const {
    Frame frame;
    frame.module = kPythonModule;
    const ProcessModules* process = owner_;
    if (process == nullptr) return frame;
    if (const auto it = process->python_frames.find(id); it != process->python_frames.end()) {
      frame.file = it->second.file;
      frame.function = it->second.function;
      frame.line = it->second.line;
    }
    return frame;
  }

  void resolve(Frame& frame) {
    // Every recorded address is a return address: the call itself is the instruction before.
    const uint64_t pc = frame.address == 0 ? 0 : frame.address - 1;
    const ProcessModules* process = owner_;
    if (process == nullptr) return;
    const Module* module = find_module(*process, pc);
    if (module == nullptr) return;
    frame.module = module->path;
    frame.offset = frame.address - module->base;
    auto [open, added] = open_.try_emplace(module);
    if (added) open->second = std::make_unique<OpenModule>(*module);
    open->second->describe(pc, frame);
  }

  const ProcessModules* find_process(uint32_t pid, uint32_t index) const {
    for (const auto& process : modules_)
      if (index != 0 ? process.process == index : process.pid == pid) return &process;
    if (index != 0) return find_process(pid, 0);  // modules made without an index (tests)
    return nullptr;
  }

  static const Module* find_module(const ProcessModules& process, uint64_t pc) {
    for (const auto& module : process.modules)
      if (pc >= module.start && pc < module.end) return &module;
    return nullptr;
  }

  const std::vector<ProcessModules>& modules_;
  const SymbolCache* cache_;
  const ProcessModules* owner_ = nullptr;  // of the location being symbolized
  std::map<const Module*, std::unique_ptr<OpenModule>> open_;
  std::map<std::pair<uint64_t, uint64_t>, Frame> frames_;  // (process or pid, address)
};

std::string_view basename_of(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool starts_with_any(std::string_view text, std::span<const std::string_view> prefixes) {
  for (std::string_view prefix : prefixes)
    if (text.starts_with(prefix)) return true;
  return false;
}

constexpr std::array<std::string_view, 17> kCudaLibraries = {
    "libcuda.so", "libcudart",     "libcupti",    "libnvidia-", "libcublas",    "libcufft",
    "libcurand",  "libcusparse",   "libcusolver", "libnvrtc",   "libnvJitLink", "libcudnn",
    "libnccl",    "libnvToolsExt", "libnvperf",   "libcufile",  "libnvjpeg"};
constexpr std::array<std::string_view, 1> kInterposerLibraries = {"libcapguard"};
constexpr std::array<std::string_view, 10> kRuntimeLibraries = {
    "libc.so", "libc-",      "libstdc++", "libgcc_s", "ld-linux",
    "ld-",     "libpthread", "libdl",     "libm.so",  "librt"};
// Functions of a statically linked cudart (inside the executable) and driver entry points.
constexpr std::array<std::string_view, 5> kCudaFunctionPrefixes = {
    "cuda", "__cuda", "cudart::", "__cudart", "libcudart"};

bool is_driver_entry_point(std::string_view function) {
  // cuInit, cuMemAlloc_v2, cuStreamBeginCapture_v2: "cu" then an upper-case letter.
  return function.size() > 2 && function[0] == 'c' && function[1] == 'u' && function[2] >= 'A' &&
         function[2] <= 'Z';
}

// Packages whose Python frames are the framework's, not the program's: what follows
// site-packages/ or dist-packages/ in a frame's file.
constexpr std::array<std::string_view, 11> kPythonFrameworks = {
    "torch/", "torchgen/", "functorch/", "cupy/",   "cupyx/",  "cupy_backends/",
    "jax/",   "jaxlib/",   "numpy/",     "triton/", "_pytest/"};

// The interpreter's own native frames: the python3.X executable or libpython3.X.
bool is_interpreter(const Frame& frame) {
  const std::string_view module = basename_of(frame.module);
  return !is_python_frame(frame) &&
         (module.starts_with("python3") || module.starts_with("libpython3"));
}

}  // namespace

FrameOwner owner_of(const Frame& frame) {
  const std::string_view module = basename_of(frame.module);
  if (starts_with_any(module, kInterposerLibraries)) return FrameOwner::Interposer;
  if (starts_with_any(module, kCudaLibraries)) return FrameOwner::Cuda;
  if (starts_with_any(module, kRuntimeLibraries)) return FrameOwner::Runtime;
  if (starts_with_any(frame.function, kCudaFunctionPrefixes) ||
      is_driver_entry_point(frame.function))
    return FrameOwner::Cuda;
  if (module.empty() && frame.function.empty()) return FrameOwner::Unknown;
  return FrameOwner::Program;
}

namespace {

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

}  // namespace

bool is_python_frame(const Frame& frame) { return frame.module == kPythonModule; }

bool is_python_user_frame(const Frame& frame) {
  if (!is_python_frame(frame) || frame.file.empty()) return false;
  const std::string_view file = frame.file;
  if (file.starts_with("<frozen")) return false;
  for (std::string_view packages : {"/site-packages/", "/dist-packages/"}) {
    const size_t at = file.rfind(packages);
    if (at == std::string_view::npos) continue;
    const std::string_view package = file.substr(at + packages.size());
    return !starts_with_any(package, kPythonFrameworks);
  }
  return file.find("/lib/python3.") == std::string_view::npos &&
         file.find("/lib64/python3.") == std::string_view::npos;
}

void interleave_python_frames(std::vector<Frame>& native, const std::vector<Frame>& python) {
  auto at = native.begin();
  while (at != native.end() && !is_interpreter(*at)) ++at;
  native.insert(at, python.begin(), python.end());
}

int choose_user_frame(const std::vector<Frame>& frames) {
  for (size_t i = 0; i < frames.size(); ++i)
    if (is_python_user_frame(frames[i])) return static_cast<int>(i);
  for (size_t i = 0; i < frames.size(); ++i) {
    if (is_launch_stub(frames[i])) {
      if (i + 1 < frames.size() && is_wrapper_of(frames[i], frames[i + 1])) ++i;
      continue;
    }
    if (owner_of(frames[i]) == FrameOwner::Program && !is_python_frame(frames[i])) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

void symbolize(Report& report, const std::vector<ProcessModules>& modules,
               const SymbolCache* cache) {
  Symbolizer symbolizer(modules, cache);
  for (auto& finding : report.findings) {
    symbolizer.symbolize(finding.location, finding.pid, finding.process);
    for (auto& related : finding.related)
      symbolizer.symbolize(related.location, finding.pid, finding.process);
  }
  for (auto& capture : report.captures) {
    symbolizer.symbolize(capture.begin, capture.pid, capture.process);
    if (capture.end) symbolizer.symbolize(*capture.end, capture.pid, capture.process);
  }
}

}  // namespace capguard
