// The kinds of CUDA calls (api_kinds.def) and the name stripping that maps a function name as
// CUPTI reports it to its catalog entry (api_catalog.def). Shared by the interposer and the
// analyzer, so both sides classify a call the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace capguard {

enum class ApiKind : uint8_t {
#define CAPGUARD_API_KIND(kind, name, outside) kind,
#include "trace/api_kinds.def"
#undef CAPGUARD_API_KIND
};
inline constexpr size_t kApiKindCount = 0
#define CAPGUARD_API_KIND(kind, name, outside) +1
#include "trace/api_kinds.def"
#undef CAPGUARD_API_KIND
    ;

// What a call does to memory a graph's nodes may hold: the memory column of api_catalog.def
// (graph lifetime), and a framework allocator's events (framework_memory.def): a block
// handed out or given back inside memory CUDA still counts as allocated.
enum class MemoryOp : uint8_t {
  None,
  AllocDevice,
  AllocHost,
  FreeDevice,
  FreeHost,
  Unmap,
  FrameworkAlloc,
  FrameworkFree
};
constexpr bool is_alloc(MemoryOp op) {
  return op == MemoryOp::AllocDevice || op == MemoryOp::AllocHost;
}
constexpr bool is_free(MemoryOp op) {
  return op == MemoryOp::FreeDevice || op == MemoryOp::FreeHost || op == MemoryOp::Unmap;
}

constexpr const char* to_string(ApiKind kind) {
  switch (kind) {
#define CAPGUARD_API_KIND(kind, name, outside) \
  case ApiKind::kind:                          \
    return name;
#include "trace/api_kinds.def"
#undef CAPGUARD_API_KIND
  }
  return "other";
}

// Whether the interposer records successful calls of this kind while no capture is open.
constexpr bool recorded_outside_capture(ApiKind kind) {
  switch (kind) {
#define CAPGUARD_API_KIND(kind, name, outside) \
  case ApiKind::kind:                          \
    return outside;
#include "trace/api_kinds.def"
#undef CAPGUARD_API_KIND
  }
  return false;
}

// "cudaMemcpyAsync_ptsz" -> "cudaMemcpyAsync" (per_thread), "cuMemcpyHtoD_v2" -> "cuMemcpyHtoD",
// "cudaMemcpy_v3020" -> "cudaMemcpy" (CUPTI's runtime enum names carry the version).
constexpr std::string_view api_base_name(std::string_view name, bool* per_thread = nullptr) {
  auto strip_version = [](std::string_view& n) {
    const size_t underscore = n.rfind("_v");
    if (underscore == std::string_view::npos || underscore + 2 == n.size()) return;
    for (size_t i = underscore + 2; i < n.size(); ++i)
      if (n[i] < '0' || n[i] > '9') return;
    n = n.substr(0, underscore);
  };
  strip_version(name);
  bool pt = false;
  for (std::string_view suffix : {std::string_view("_ptsz"), std::string_view("_ptds")}) {
    if (name.ends_with(suffix)) {
      name.remove_suffix(suffix.size());
      pt = true;
    }
  }
  strip_version(name);
  if (per_thread != nullptr) *per_thread = pt;
  return name;
}

}  // namespace capguard
