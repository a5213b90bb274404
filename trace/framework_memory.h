// Framework allocator events (framework_memory.def): their names, shared by the interposer that
// writes them and the analyzer that classifies them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace capguard::trace {

enum class FrameworkMemoryOp : uint8_t { Attach, Alloc, Free };

enum class FrameworkMemory : uint8_t {
#define CAPGUARD_FRAMEWORK_MEMORY(Name, api, op, owner) Name,
#include "trace/framework_memory.def"
};

struct FrameworkMemoryInfo {
  FrameworkMemory id;
  std::string_view api;
  FrameworkMemoryOp op;
  std::string_view owner;
};

inline constexpr FrameworkMemoryInfo kFrameworkMemory[] = {
#define CAPGUARD_FRAMEWORK_MEMORY(Name, api, op, owner) \
  {FrameworkMemory::Name, api, FrameworkMemoryOp::op, owner},
#include "trace/framework_memory.def"
};

constexpr const FrameworkMemoryInfo& framework_memory(FrameworkMemory id) {
  return kFrameworkMemory[static_cast<size_t>(id)];
}

// The entry of an event's name, if it is one of the list's.
constexpr const FrameworkMemoryInfo* find_framework_memory(std::string_view api) {
  for (const FrameworkMemoryInfo& info : kFrameworkMemory)
    if (info.api == api) return &info;
  return nullptr;
}

// The read loop's cheap test before find_framework_memory: each name of the list has a '.' in
// its first characters (its package: "torch.", "cupy."), which no CUDA function's name has.
inline constexpr size_t kFrameworkPackageMax = 8;
constexpr bool may_be_framework_memory(std::string_view api) {
  return api.substr(0, kFrameworkPackageMax).find('.') != std::string_view::npos;
}
static_assert(
    [] {
      for (const FrameworkMemoryInfo& info : kFrameworkMemory)
        if (!may_be_framework_memory(info.api)) return false;
      return true;
    }(),
    "a framework memory event's package must end within kFrameworkPackageMax characters");

// Why a hook did not attach: the Attach event's result (0: attached and seeing frees).
enum class FrameworkHookResult : int32_t {
  Attached = 0,
  NoSymbols = 1,  // the library's symbol table lacks what the hook needs (stripped, other version)
  OtherAllocator = 2,  // the live allocator is not the native caching allocator (cudaMallocAsync,
                       // a pluggable allocator)
  UnknownLayout = 3,   // a version whose trace entries capguard cannot read
};

constexpr std::string_view framework_hook_result_text(int32_t result) {
  switch (static_cast<FrameworkHookResult>(result)) {
    case FrameworkHookResult::Attached:
      return "attached: frees and reuses of memory a live graph holds are seen";
    case FrameworkHookResult::NoSymbols:
      return "not attached: the library's symbol table lacks the allocator's hook (stripped?)";
    case FrameworkHookResult::OtherAllocator:
      return "not attached: the program uses another CUDA allocator backend (cudaMallocAsync or "
             "a pluggable allocator)";
    case FrameworkHookResult::UnknownLayout:
      return "not attached: a PyTorch version whose allocator trace entries capguard cannot read";
  }
  return "not attached";
}

}  // namespace capguard::trace
