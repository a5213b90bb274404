// The words for the CUDA a process ran: report headers, JSON and SARIF say the same.
#include <fmt/format.h>

#include "model/report.h"

namespace capguard {

std::string cuda_version_text(uint32_t version) {
  if (version == 0) return "unknown";
  if (version % 1000 == 999) return fmt::format("{}.x", version / 1000);  // the minor unknown
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

std::string cuda_info_text(const CudaInfo& cuda) {
  std::string text;
  if (cuda.runtime != 0) {
    text = fmt::format("CUDA {} runtime", cuda_version_text(cuda.runtime));
    if (cuda.linkage == "static" || cuda.linkage == "shared")
      text += fmt::format(" ({} cudart)", cuda.linkage);
  } else {
    text = "no CUDA runtime found (driver API)";
  }
  if (cuda.other_runtime != 0)
    text += fmt::format(" and a CUDA {} runtime", cuda_version_text(cuda.other_runtime));
  text += fmt::format(", driver {}", cuda_version_text(cuda.driver));
  if (cuda.cupti_major != 0)
    text += fmt::format(", CUPTI {} (API {})", cuda.cupti_major, cuda.cupti_api);
  else
    text += ", no CUPTI";
  return text;
}

}  // namespace capguard
