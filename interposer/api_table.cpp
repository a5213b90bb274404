#include "interposer/api_table.h"

#include <cupti.h>  // also defines the params structs of both domains

#include <array>
#include <initializer_list>

namespace capguard::interposer {
namespace {

struct SlotOffset {
  Slot slot;
  size_t offset;
};

struct Entry {
  trace::ApiDomain domain;
  uint32_t cbid;
  CallbackInfo info;
};

// Not constexpr: reaching it while the table is built at compile time is a compile error.
void params_struct_too_large_for_the_offset_table() {}

constexpr bool contains(const char* text, const char* word) {
  for (; *text != '\0'; ++text) {
    const char* a = text;
    const char* b = word;
    while (*b != '\0' && *a == *b) ++a, ++b;
    if (*b == '\0') return true;
  }
  return false;
}

constexpr CallbackInfo make_info(const char* name, ApiKind kind, MemoryOp memory, int per_thread,
                                 int returns_error, int has_params,
                                 std::initializer_list<SlotOffset> offsets) {
  CallbackInfo info;
  info.name = name;
  info.kind = kind;
  info.memory = memory;
  info.per_thread = per_thread != 0;
  info.returns_error = returns_error != 0;
  info.has_params = has_params != 0;
  info.internal = name[0] == '_' && name[1] == '_';
  info.getter = contains(name, "Get");
  info.synchronizes =
      (kind == ApiKind::StreamSync || kind == ApiKind::DeviceSync || kind == ApiKind::EventSync) &&
      contains(name, "Synchronize");
  for (const SlotOffset& o : offsets) {
    // Params structs are a few pointers long; an offset past 254 would not fit the table.
    if (o.offset > 254) params_struct_too_large_for_the_offset_table();
    info.offset_plus_one[static_cast<size_t>(o.slot)] = static_cast<uint8_t>(o.offset + 1);
  }
  return info;
}

static_assert(offsetof(cudaLaunchConfig_t, stream) == kLaunchConfigStreamOffset &&
                  offsetof(CUlaunchConfig, hStream) == kLaunchConfigStreamOffset,
              "decode.cpp reads a launch config's stream at kLaunchConfigStreamOffset");

#define CG_OFF(api, member, slot) \
  SlotOffset { Slot::slot, offsetof(api##_params, member) }
#define CG_API(domain, cbid, api, kind, memory, per_thread, returns_error, has_params, ...)     \
  Entry{trace::ApiDomain::domain, cbid,                                                         \
        make_info(#api, ApiKind::kind, MemoryOp::memory, per_thread, returns_error, has_params, \
                  {__VA_ARGS__})},

constexpr Entry kEntries[] = {
#include "interposer/api_table.inc"
};

#undef CG_API
#undef CG_OFF

constexpr uint32_t kRuntimeSize = CUPTI_RUNTIME_TRACE_CBID_SIZE;
constexpr uint32_t kDriverSize = CUPTI_DRIVER_TRACE_CBID_SIZE;

template <uint32_t Size>
constexpr std::array<CallbackInfo, Size> build(trace::ApiDomain domain) {
  std::array<CallbackInfo, Size> table{};
  for (const Entry& e : kEntries) {
    if (e.domain == domain && e.cbid < Size) table[e.cbid] = e.info;
  }
  return table;
}

constinit const std::array<CallbackInfo, kRuntimeSize> kRuntime =
    build<kRuntimeSize>(trace::ApiDomain::Runtime);
constinit const std::array<CallbackInfo, kDriverSize> kDriver =
    build<kDriverSize>(trace::ApiDomain::Driver);
constinit const CallbackInfo kUnknown{};

}  // namespace

const CallbackInfo& api_info(trace::ApiDomain domain, uint32_t cbid) {
  if (domain == trace::ApiDomain::Runtime) return cbid < kRuntimeSize ? kRuntime[cbid] : kUnknown;
  return cbid < kDriverSize ? kDriver[cbid] : kUnknown;
}

uint32_t api_table_size(trace::ApiDomain domain) {
  return domain == trace::ApiDomain::Runtime ? kRuntimeSize : kDriverSize;
}

}  // namespace capguard::interposer
