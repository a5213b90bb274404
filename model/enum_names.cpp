// The names of the model's enums, expanded from enum_names.def (no switch written by hand).
#include "model/enum_names.h"

#include "model/capture_model.h"

namespace capguard {

const char* to_string(Severity s) {
#define CAPGUARD_SEVERITY(value, name, heading) \
  if (s == Severity::value) return name;
#include "model/enum_names.def"
  return "error";
}

const char* to_string(CaptureState s) {
#define CAPGUARD_CAPTURE_STATE(value, name) \
  if (s == CaptureState::value) return name;
#include "model/enum_names.def"
  return "open";
}

const char* heading_word(Severity s) {
#define CAPGUARD_SEVERITY(value, name, heading) \
  if (s == Severity::value) return heading;
#include "model/enum_names.def"
  return "ERROR";
}

std::optional<Severity> severity_named(std::string_view name) {
#define CAPGUARD_SEVERITY(value, text, heading) \
  if (name == text) return Severity::value;
#include "model/enum_names.def"
  return std::nullopt;
}

std::optional<trace::CaptureMode> mode_named(std::string_view name) {
#define CAPGUARD_CAPTURE_MODE(value, text) \
  if (name == text) return trace::CaptureMode::value;
#include "model/enum_names.def"
  return std::nullopt;
}

std::vector<std::string> mode_names() {
  return {
#define CAPGUARD_CAPTURE_MODE(value, name) name,
#include "model/enum_names.def"
  };
}

std::vector<std::string> severity_names() {
  return {
#define CAPGUARD_SEVERITY(value, name, heading) name,
#include "model/enum_names.def"
  };
}

const char* mode_name(trace::CaptureMode mode) {
#define CAPGUARD_CAPTURE_MODE(value, name) \
  if (mode == trace::CaptureMode::value) return name;
#include "model/enum_names.def"
  return "global";
}

}  // namespace capguard
