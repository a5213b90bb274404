#include "model/api_catalog.h"

#include <algorithm>
#include <array>

#include "trace/framework_memory.h"

namespace capguard {
namespace {

struct Entry {
  std::string_view name;  // base name: no _ptsz/_ptds, no _vN
  ApiKind kind;
  bool takes_stream;
};

constexpr bool S = true;   // takes a stream
constexpr bool N = false;  // does not

constexpr Entry kEntries[] = {
#define CAPGUARD_API(name, kind, stream) {#name, ApiKind::kind, stream},
#include "trace/api_catalog.def"
#undef CAPGUARD_API
};

struct MemoryEntry {
  std::string_view name;
  MemoryOp op;
};

constexpr MemoryEntry kMemory[] = {
#define CAPGUARD_API(name, kind, stream)
#define CAPGUARD_API_MEMORY(name, op, pointer, direction, size) {#name, MemoryOp::op},
#include "trace/api_catalog.def"
#undef CAPGUARD_API_MEMORY
#undef CAPGUARD_API
};

constexpr auto kSorted = [] {
  std::array<Entry, std::size(kEntries)> sorted{};
  std::copy(std::begin(kEntries), std::end(kEntries), sorted.begin());
  std::sort(sorted.begin(), sorted.end(),
            [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return sorted;
}();

constexpr bool has_duplicates() {
  for (size_t i = 1; i < kSorted.size(); ++i)
    if (kSorted[i - 1].name == kSorted[i].name) return true;
  return false;
}
static_assert(!has_duplicates(), "api catalog: a name is listed twice");

const Entry* find_entry(std::string_view name) {
  auto it = std::lower_bound(kSorted.begin(), kSorted.end(), name,
                             [](const Entry& e, std::string_view n) { return e.name < n; });
  return it != kSorted.end() && it->name == name ? &*it : nullptr;
}

}  // namespace

ApiInfo classify_api(std::string_view name) {
  ApiInfo info;
  info.base = api_base_name(name, &info.per_thread);
  info.domain = name.starts_with("cu") && !name.starts_with("cuda") ? trace::ApiDomain::Driver
                                                                    : trace::ApiDomain::Runtime;
  for (const MemoryEntry& m : kMemory)  // a short list, asked once per distinct name
    if (m.name == info.base) info.memory = m.op;
  if (const trace::FrameworkMemoryInfo* framework = trace::find_framework_memory(name)) {
    info.base = framework->api;  // no CUDA entry point: never stripped, never the driver's
    info.domain = trace::ApiDomain::Runtime;
    if (framework->op == trace::FrameworkMemoryOp::Alloc) info.memory = MemoryOp::FrameworkAlloc;
    if (framework->op == trace::FrameworkMemoryOp::Free) info.memory = MemoryOp::FrameworkFree;
  }
  if (const Entry* entry = find_entry(info.base)) {
    info.kind = entry->kind;
    info.takes_stream = entry->takes_stream;
  }
  return info;
}

}  // namespace capguard
