#include "interposer/decode.h"

#include <cstring>

namespace capguard::interposer {
namespace {

template <typename T>
T read_at(const void* params, size_t offset) {
  T value;
  std::memcpy(&value, static_cast<const char*>(params) + offset, sizeof(T));
  return value;
}

uint64_t read_handle(const CallbackInfo& info, const void* params, Slot slot) {
  return reinterpret_cast<uint64_t>(read_at<const void*>(params, info.offset(slot)));
}

// The stream named by a parameter, or by the launch config a parameter points to (the
// config is the caller's, valid for the whole call). A null config names no stream.
bool read_stream(const CallbackInfo& info, const void* params, uint64_t& stream) {
  if (info.has(Slot::Stream)) {
    stream = read_handle(info, params, Slot::Stream);
    return true;
  }
  if (!info.has(Slot::LaunchConfig)) return false;
  const auto* config = read_at<const char*>(params, info.offset(Slot::LaunchConfig));
  if (config == nullptr) return false;
  stream = reinterpret_cast<uint64_t>(read_at<const void*>(config, kLaunchConfigStreamOffset));
  return true;
}

// Reads a handle the call wrote through an out-pointer parameter (cudaStream_t* etc.).
bool read_out_handle(const CallbackInfo& info, const void* params, Slot slot, uint64_t& value) {
  if (!info.has(slot)) return false;
  const auto* out = read_at<const void* const*>(params, info.offset(slot));
  if (out == nullptr) return false;
  value = reinterpret_cast<uint64_t>(*out);
  return true;
}

trace::CaptureMode to_mode(uint32_t value) {
  return static_cast<trace::CaptureMode>(value <= 2 ? value : 0);
}

}  // namespace

int32_t decode_result(const CallbackInfo& info, const void* return_value) {
  if (!info.returns_error || return_value == nullptr) return 0;
  return *static_cast<const int32_t*>(return_value);
}

bool decode_mode_pointer(const CallbackInfo& info, const void* params, uint32_t& mode) {
  if (params == nullptr || !info.has(Slot::ModePtr)) return false;
  const auto* p = read_at<const uint32_t*>(params, info.offset(Slot::ModePtr));
  if (p == nullptr) return false;
  mode = *p;
  return true;
}

bool decode_stream(const CallbackInfo& info, const void* params, uint64_t& stream) {
  return params != nullptr && read_stream(info, params, stream);
}

void decode_params(const CallbackInfo& info, const void* params, int32_t result,
                   trace::ApiEvent& event) {
  using trace::Field;
  if (params == nullptr || !info.has_params) return;
  if (read_stream(info, params, event.stream)) event.set(Field::Stream);
  if (info.has(Slot::Event)) {
    event.event = read_handle(info, params, Slot::Event);
    event.set(Field::Event);
  }
  if (info.has(Slot::Flags)) {
    event.flags = read_at<uint32_t>(params, info.offset(Slot::Flags));
    event.set(Field::Flags);
  }
  if (info.has(Slot::Mode)) {
    event.mode = to_mode(read_at<uint32_t>(params, info.offset(Slot::Mode)));
    event.set(Field::Mode);
  }
  if (info.has(Slot::CopyKind)) {
    event.copy_kind = read_at<uint32_t>(params, info.offset(Slot::CopyKind));
    event.set(Field::CopyKind);
  }
  if (info.has(Slot::Graph)) {
    event.graph = read_handle(info, params, Slot::Graph);
    event.set(Field::Graph);
  }
  if (info.has(Slot::GraphExec)) {
    event.graph_exec = read_handle(info, params, Slot::GraphExec);
    event.set(Field::GraphExec);
  }
  if (info.has(Slot::Ptr)) {  // graph lifetime
    event.pointer = read_handle(info, params, Slot::Ptr);
    event.set(Field::Pointer);
  }
  if (info.has(Slot::Size)) {
    event.size = read_at<uint64_t>(params, info.offset(Slot::Size));
    event.set(Field::Size);
  }
  // Out-pointers hold something only when the call succeeded.
  if (result != 0) return;
  if (read_out_handle(info, params, Slot::OutPtr, event.pointer)) event.set(Field::Pointer);
  if (read_out_handle(info, params, Slot::OutStream, event.stream)) event.set(Field::Stream);
  if (read_out_handle(info, params, Slot::OutEvent, event.event)) event.set(Field::Event);
  if (read_out_handle(info, params, Slot::OutGraph, event.graph)) event.set(Field::Graph);
  if (read_out_handle(info, params, Slot::OutGraphExec, event.graph_exec)) {
    event.set(Field::GraphExec);
  }
}

uint64_t queryable_stream(const CallbackInfo& info, uint64_t stream) {
  if (stream == trace::kStreamLegacy) return 0;
  if (stream == 0) return info.per_thread ? trace::kStreamPerThread : 0;
  return stream;
}

uint64_t decode_graph_exec(const CallbackInfo& info, const void* params) {
  if (params == nullptr || !info.has(Slot::GraphExec)) return 0;
  return read_handle(info, params, Slot::GraphExec);
}

uint64_t decode_node(const CallbackInfo& info, const void* params) {
  if (params == nullptr || !info.has(Slot::Node)) return 0;
  return read_handle(info, params, Slot::Node);
}

uint64_t decode_pointer(const CallbackInfo& info, const void* params) {
  if (params == nullptr || !info.has(Slot::Ptr)) return 0;
  return read_handle(info, params, Slot::Ptr);
}

const void* decode_update_info(const CallbackInfo& info, const void* params) {
  if (params == nullptr || !info.has(Slot::UpdateInfo)) return nullptr;
  return read_at<const void*>(params, info.offset(Slot::UpdateInfo));
}

}  // namespace capguard::interposer
