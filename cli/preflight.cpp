// capguard run's check before the program starts (cli/preflight.h).
#include "cli/preflight.h"

#include <dlfcn.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "engine/gate.h"
#include "util/regular_file.h"

namespace capguard::cli {
namespace {

// The toolkit's per-target library directory: x86_64-linux, or sbsa-linux on aarch64 servers
// (Grace), the layout CUDA's SBSA packages install.
#if defined(__aarch64__)
constexpr const char* kCudaTargetLibDir = "targets/sbsa-linux/lib";
#else
constexpr const char* kCudaTargetLibDir = "targets/x86_64-linux/lib";
#endif

// dlopen is the honest test: it is what the interposer does. Closed again at once. A path (not
// a name for the loader's search) is opened first, without blocking, and loaded only as the
// regular file it is (CAPGUARD_CUPTI naming a FIFO hung dlopen, /dev/zero too).
bool loads(const std::string& library, std::string* error = nullptr) {
  int fd = -1;
  if (library.find('/') != std::string::npos) {
    OpenRegular why;
    struct stat st;
    fd = open_regular(library, why, st);
    if (fd < 0) {
      if (error != nullptr)
        *error = why == OpenRegular::NotRegular ? "not a regular file" : std::strerror(errno);
      return false;
    }
  }
  const std::string through = fd >= 0 ? "/proc/self/fd/" + std::to_string(fd) : library;
  void* handle = dlopen(through.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (fd >= 0) close(fd);
  if (handle == nullptr) {
    if (error != nullptr) {
      const char* text = dlerror();
      *error = text != nullptr ? text : "not found";
      if (error->starts_with(through + ": ")) error->erase(0, through.size() + 2);
    }
    return false;
  }
  dlclose(handle);
  return true;
}

bool any_exists(const std::vector<std::string>& patterns) {
  for (const std::string& pattern : patterns) {
    glob_t found{};
    const bool hit = glob(pattern.c_str(), GLOB_NOSORT, nullptr, &found) == 0 && found.gl_pathc;
    globfree(&found);
    if (hit) return true;
  }
  return false;
}

std::vector<std::string> toolkit_roots() {
  std::vector<std::string> roots;
  for (const char* name : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0')
      roots.emplace_back(value);
  roots.insert(roots.end(), {"/usr/local/cuda-13", "/usr/local/cuda-12", "/usr/local/cuda"});
  return roots;
}

// Where the interposer looks before the program runs (interposer/cupti_loader.cpp): the path
// CAPGUARD_CUPTI names, alone; else the library path, then the toolkit's directories. (Beside
// the program's own libcudart is known only once it runs: the message says so.)
std::string find_cupti(const PreflightProbe& probe) {
  if (const char* chosen = std::getenv("CAPGUARD_CUPTI"); chosen != nullptr && *chosen != '\0')
    return loads(chosen) ? chosen : std::string();
  for (const std::string& library : probe.cupti_libraries)
    if (loads(library)) return library;
  const std::vector<std::string> roots =
      probe.cupti_roots.empty() ? toolkit_roots() : probe.cupti_roots;
  for (const std::string& root : roots)
    for (const char* sub : {"lib64", "extras/CUPTI/lib64", "lib", kCudaTargetLibDir})
      for (const std::string& library : probe.cupti_libraries) {
        const std::string path = root + "/" + sub + "/" + library;
        if (loads(path)) return path;
      }
  return {};
}

}  // namespace

PreflightResult check_gpu_prerequisites(const PreflightProbe& probe) {
  PreflightResult result;
  result.driver = loads(probe.driver_library, &result.driver_error);
  result.device = any_exists(probe.device_globs);
  result.cupti = find_cupti(probe);
  return result;
}

std::string preflight_message(const PreflightResult& result, bool runs_anyway,
                              bool require_attach) {
  std::string missing;
  auto add = [&](const std::string& what) { missing += (missing.empty() ? "" : "; ") + what; };
  if (!result.driver) add("no CUDA driver (libcuda.so.1: " + result.driver_error + ")");
  if (!result.device) add("no GPU device (/dev/nvidia*, /dev/dxg)");
  if (result.cupti.empty())
    add("no CUPTI (libcupti.so.12 or .13 at $CAPGUARD_CUPTI, on the library path, in "
        "$CUDA_HOME, $CUDA_PATH or /usr/local/cuda*; one beside the program's CUDA runtime, as "
        "PyTorch's wheels have, is still found once it runs)");
  if (missing.empty()) return {};
  std::string then;
  if (!runs_anyway)
    then = "the program is not started (--fail-fast)";
  else if (!result.gpu_usable())
    then = require_attach ? "the program runs anyway, and capguard will exit 3 after it"
                          : "the program runs anyway, and capguard will only warn after it "
                            "(--no-require-attach)";
  else
    then = "the program runs now";
  return "warning: before starting the program: " + missing + ": " + then;
}

std::optional<int> preflight(const RunOptions& options, const std::vector<OutputTarget>& targets) {
  const PreflightResult result = check_gpu_prerequisites();
  const bool stop = options.fail_fast && !result.gpu_usable();
  const std::string message = preflight_message(result, !stop, options.require_attach);
  if (!message.empty()) say(message);
  if (!stop) return std::nullopt;
  // Failed closed like a run that could not attach (the gate, engine/gate.h, decides; whatever
  // --no-require-attach says, as the program was not run), with every report written.
  GateInput gate;
  gate.nothing_attached =
      "cannot attach: no usable GPU here; the program was not started (--fail-fast)";
  GateOptions gate_options;
  gate_options.fail_on = options.report.fail_on;
  const GateResult verdict = judge_gate(gate, gate_options);
  Report report;
  report.problems = verdict.reasons;
  return status_after_writing(verdict, write_report(report, targets, options.report));
}

}  // namespace capguard::cli
