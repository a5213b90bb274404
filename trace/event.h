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
  std::string_view api;  // writer: CUPTI's constant string; reader: interned, lives as the reader
  int32_t result = 0;
  uint32_t stack = 0;  // 0 = no stack
  uint32_t fields = 0; // bitwise or of Field: which of the members below are known

  uint64_t stream = 0;
  uint32_t stream_flags = 0;
  CaptureStatus status_before = CaptureStatus::None;
  CaptureStatus status_after = CaptureStatus::None;
  uint64_t capture_id = 0;
  uint64_t event = 0;
  uint32_t flags = 0;
  CaptureMode mode = CaptureMode::Global;
  CaptureMode prev_mode = CaptureMode::Global;
  uint32_t copy_kind = 0;
  uint64_t graph = 0;
  uint64_t graph_exec = 0;
  uint64_t nodes = 0;
  ApiDomain domain = ApiDomain::Runtime;

  bool has(Field f) const { return (fields & static_cast<uint32_t>(f)) != 0; }
  void set(Field f) { fields |= static_cast<uint32_t>(f); }
};

}  // namespace capguard::trace
