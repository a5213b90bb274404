#include <fmt/format.h>

#include "model/cuda_errors.h"
#include "rules/rule.h"

namespace capguard::rules {

std::string hex(uint64_t value) { return fmt::format("{:#x}", value); }

std::string describe_stream(const StreamKey& stream) {
  if (stream.handle == trace::kStreamLegacy) return "the legacy NULL stream";
  if (stream.handle == trace::kStreamPerThread)
    return fmt::format("the per-thread default stream of thread {}", stream.tid);
  return "stream " + hex(stream.handle);
}

std::string describe_capture(const Capture& capture) {
  return fmt::format("capture #{} ({}, {} mode)", capture.id, describe_stream(capture.origin),
                     mode_name(capture.mode));
}

std::string describe_capture_short(const Capture& capture) {
  return fmt::format("capture #{}, {} mode", capture.id, mode_name(capture.mode));
}

std::string describe_result(const Call& call) {
  trace::ApiDomain domain = call.ev->has(trace::Field::Domain) ? call.ev->domain : call.api.domain;
  return fmt::format("{} ({})", result_name(call.result(), domain), call.result());
}

std::string describe_site(const Site& site) {
  return fmt::format("{} on thread {}", site.api, site.tid);
}

const Capture* capture_of(const Call& call) {
  if (!call.victims.empty()) return call.victims.front();
  if (call.stream_capture) return call.stream_capture;
  return call.event_capture;
}

void add_capture_begin(Draft& draft, const Capture& capture, const std::string& role) {
  draft.related.push_back({role,
                           fmt::format("{} began here ({} on thread {})", describe_capture(capture),
                                       capture.begin.api, capture.tid),
                           capture.begin});
}

}  // namespace capguard::rules
