// What `capguard run` can tell before it starts the program: whether this machine has a CUDA
// driver (libcuda.so.1 loadable, a GPU device node) and a CUPTI capguard would find. Said on the
// first line, at once, so that a job that runs for an hour without a GPU learns it at the start
// rather than from the report at the end.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output.h"

namespace capguard::cli {

// Where to look; the defaults are this machine's. Tests point them elsewhere.
struct PreflightProbe {
  std::string driver_library = "libcuda.so.1";
  // A GPU's device nodes: /dev/nvidia0... (Linux), /dev/dxg (WSL 2).
  std::vector<std::string> device_globs = {"/dev/nvidia[0-9]*", "/dev/dxg"};
  // The CUPTI libraries the interposer loads (interposer/cupti_loader.cpp), newest first, and
  // the toolkit roots it tries after the library path.
  std::vector<std::string> cupti_libraries = {"libcupti.so.13", "libcupti.so.12"};
  std::vector<std::string> cupti_roots;  // empty: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda
};

struct PreflightResult {
  bool driver = false;       // libcuda.so.1 loads
  bool device = false;       // a GPU device node exists
  std::string cupti;         // the CUPTI found (soname or path); empty: none
  std::string driver_error;  // dlerror() when the driver did not load
  bool gpu_usable() const { return driver && device; }
};

PreflightResult check_gpu_prerequisites(const PreflightProbe& probe = {});

// The one line to print, or empty when everything was found. `runs_anyway`: the program is
// still started (the default); false with --fail-fast.
std::string preflight_message(const PreflightResult& result, bool runs_anyway, bool require_attach);

// The check as `run` makes it: prints the line (first, on stderr), and with --fail-fast and no
// usable GPU writes every report (the problem said) and returns the exit status, 3; otherwise
// nothing, and the program is started.
std::optional<int> preflight(const RunOptions& options, const std::vector<OutputTarget>& targets);

}  // namespace capguard::cli
