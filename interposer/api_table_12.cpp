// The API table of CUDA 12.x: generated from that release's CUPTI headers
// (api_table_12.inc, gen_api_table.py) and compiled against them alone, so every member
// offset is that release's (issue 30).
#include <cupti.h>  // CUDA 12.x's: also defines the params structs of both domains

#include "interposer/api_table_entries.h"

static_assert(CUDA_VERSION / 1000 == 12,
              "api_table_12.cpp must be compiled against CUDA 12.x's CUPTI headers");

namespace capguard::interposer {
namespace {

static_assert(offsetof(cudaLaunchConfig_t, stream) == kLaunchConfigStreamOffset &&
                  offsetof(CUlaunchConfig, hStream) == kLaunchConfigStreamOffset,
              "decode.cpp reads a launch config's stream at kLaunchConfigStreamOffset");

constexpr table_detail::Entry kEntries[] = {
#include "interposer/api_table_12.inc"
};

constexpr uint32_t kRuntimeSize = CUPTI_RUNTIME_TRACE_CBID_SIZE;
constexpr uint32_t kDriverSize = CUPTI_DRIVER_TRACE_CBID_SIZE;
constinit const std::array<CallbackInfo, kRuntimeSize> kRuntime =
    table_detail::build<kRuntimeSize>(kEntries, trace::ApiDomain::Runtime);
constinit const std::array<CallbackInfo, kDriverSize> kDriver =
    table_detail::build<kDriverSize>(kEntries, trace::ApiDomain::Driver);
constinit const ApiTable kTable{12, kRuntime.data(), kRuntimeSize, kDriver.data(), kDriverSize};

}  // namespace

const ApiTable& api_table_cuda12() { return kTable; }

}  // namespace capguard::interposer
