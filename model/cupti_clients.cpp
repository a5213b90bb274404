#include "model/cupti_clients.h"

#include "util/base_name.h"

namespace capguard {
namespace {

struct KnownClient {
  std::string_view library_prefix;  // of the file name
  std::string_view who;
};

// The CUPTI clients programs under capguard bring along, by the library that subscribes.
constexpr KnownClient kKnownClients[] = {
    {"libtorch_cpu", "PyTorch's profiler (kineto)"},
    {"libtorch_cuda", "PyTorch's profiler (kineto)"},
    {"libkineto", "kineto"},
    {"libtensorflow", "TensorFlow's profiler"},
    {"libxla", "XLA's profiler"},
    {"libjax", "JAX's profiler"},
    {"cupy", "CuPy's profiler"},
    {"numba", "Numba's profiler"},
    {"libcupti", "CUPTI"},
};

}  // namespace

std::string describe_cupti_client(std::string_view recorded) {
  if (recorded.empty()) return "a CUPTI client";
  const std::string file(base_name(recorded));
  for (const KnownClient& known : kKnownClients) {
    if (file.starts_with(known.library_prefix)) return std::string(known.who) + " in " + file;
  }
  return file;
}

}  // namespace capguard
