// The body of api_table_12.cpp and api_table_13.cpp, one per CUDA major: include it after that
// major's <cupti.h>, with CAPGUARD_CUDA_MAJOR (12, 13) and CAPGUARD_API_TABLE_INC (the generated
// table's path) defined. It defines capguard::interposer::api_table_cudaN().
#include "interposer/api_table_entries.h"

#define CAPGUARD_API_TABLE_FN2(major) api_table_cuda##major
#define CAPGUARD_API_TABLE_FN(major) CAPGUARD_API_TABLE_FN2(major)

static_assert(CUDA_VERSION / 1000 == CAPGUARD_CUDA_MAJOR,
              "a major's API table must be compiled against that major's CUPTI headers alone");

namespace capguard::interposer {
namespace {

static_assert(offsetof(cudaLaunchConfig_t, stream) == kLaunchConfigStreamOffset &&
                  offsetof(CUlaunchConfig, hStream) == kLaunchConfigStreamOffset,
              "decode.cpp reads a launch config's stream at kLaunchConfigStreamOffset");

constexpr table_detail::Entry kEntries[] = {
#include CAPGUARD_API_TABLE_INC
};

constexpr uint32_t kRuntimeSize = CUPTI_RUNTIME_TRACE_CBID_SIZE;
constexpr uint32_t kDriverSize = CUPTI_DRIVER_TRACE_CBID_SIZE;
constinit const std::array<CallbackInfo, kRuntimeSize> kRuntime =
    table_detail::build<kRuntimeSize>(kEntries, trace::ApiDomain::Runtime);
constinit const std::array<CallbackInfo, kDriverSize> kDriver =
    table_detail::build<kDriverSize>(kEntries, trace::ApiDomain::Driver);
constinit const ApiTable kTable{CAPGUARD_CUDA_MAJOR, kRuntime.data(), kRuntimeSize,
                                kDriver.data(), kDriverSize};

}  // namespace

const ApiTable& CAPGUARD_API_TABLE_FN(CAPGUARD_CUDA_MAJOR)() { return kTable; }

}  // namespace capguard::interposer
