// The in-memory form of an 'e' record (see format.h), shared by writer and reader.
#pragma once

#include <cstdint>
#include <string_view>

#include "trace/format.h"

namespace capguard::trace {

struct ApiEvent {
  uint64_t seq = 0;
  uint64_t time_ns = 0;
  uint32_t tid = 0;
  std::string_view api;  // writer: CUPTI's constant string; reader: lives as the sink
  int32_t result = 0;
  uint32_t stack = 0;   // 0 = no stack
  uint32_t fields = 0;  // bitwise or of Field: which of the members below are known

  // The optional fields (trace/event_fields.def): stream, stream_flags, status_before,
  // status_after, capture_id, event, flags, mode, prev_mode, copy_kind, graph, graph_exec,
  // nodes, domain. Zero (None, Global, Runtime) until set.
#define CAPGUARD_EVENT_FIELD(Name, key, member, type, ...) type member{};
#include "trace/event_fields.def"

  bool has(Field f) const { return (fields & static_cast<uint32_t>(f)) != 0; }
  void set(Field f) { fields |= static_cast<uint32_t>(f); }
};

}  // namespace capguard::trace
