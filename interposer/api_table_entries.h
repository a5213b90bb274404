// How a generated API table (api_table_12.inc, api_table_13.inc) becomes the per-callback-id
// arrays: included by exactly one translation unit per CUDA major, after that major's <cupti.h>,
// so that every CG_OFF member name is checked by the compiler against that release's params
// structs (the layouts differ between 12.x and 13.0 where 13.0 dropped calls).
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>

#include "interposer/api_table.h"

namespace capguard::interposer::table_detail {

struct SlotOffset {
  Slot slot;
  size_t offset;
};

struct Entry {
  trace::ApiDomain domain;
  uint32_t cbid;
  CallbackInfo info;
};

// Not constexpr: reaching it while a table is built at compile time is a compile error.
inline void params_struct_too_large_for_the_offset_table() {}

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

template <uint32_t Size, size_t N>
constexpr std::array<CallbackInfo, Size> build(const Entry (&entries)[N], trace::ApiDomain domain) {
  std::array<CallbackInfo, Size> table{};
  for (const Entry& e : entries) {
    if (e.domain == domain && e.cbid < Size) table[e.cbid] = e.info;
  }
  return table;
}

}  // namespace capguard::interposer::table_detail

#define CG_OFF(api, member, slot)                                      \
  ::capguard::interposer::table_detail::SlotOffset {                   \
    ::capguard::interposer::Slot::slot, offsetof(api##_params, member) \
  }
#define CG_API(domain, cbid, api, kind, memory, per_thread, returns_error, has_params, ...)     \
  ::capguard::interposer::table_detail::Entry{                                                  \
      ::capguard::trace::ApiDomain::domain, cbid,                                               \
      ::capguard::interposer::table_detail::make_info(#api, ::capguard::ApiKind::kind,          \
                                                      ::capguard::MemoryOp::memory, per_thread, \
                                                      returns_error, has_params, {__VA_ARGS__})},
