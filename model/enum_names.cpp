// The names of the model's enums, expanded from enum_names.def (no switch written by hand).
#include "model/enum_names.h"

#include <iterator>

namespace capguard {
namespace {

constexpr const char* kSeverityNames[] = {
#define CAPGUARD_SEVERITY(value, name, heading) name,
#include "model/enum_names.def"
};
constexpr const char* kSeverityHeadings[] = {
#define CAPGUARD_SEVERITY(value, name, heading) heading,
#include "model/enum_names.def"
};
constexpr const char* kCaptureStateNames[] = {
#define CAPGUARD_CAPTURE_STATE(value, name) name,
#include "model/enum_names.def"
};
constexpr const char* kModeNames[] = {
#define CAPGUARD_CAPTURE_MODE(value, name) name,
#include "model/enum_names.def"
};
constexpr const char* kVerdictNames[] = {
#define CAPGUARD_REHEARSAL_VERDICT(value, name) name,
#include "model/enum_names.def"
};

// trace/format.h numbers CaptureMode for the trace: its names must be listed in that order.
constexpr trace::CaptureMode kModes[] = {
#define CAPGUARD_CAPTURE_MODE(value, name) trace::CaptureMode::value,
#include "model/enum_names.def"
};
static_assert([] {
  for (size_t i = 0; i < std::size(kModes); ++i)
    if (static_cast<size_t>(kModes[i]) != i) return false;
  return true;
}());

// The enums are declared from the same lines in the same order: a value is its name's index.
// A value outside the list (only a corrupted one) gets the first name rather than a crash.
template <class Enum, size_t N>
const char* name_of(Enum value, const char* const (&names)[N]) {
  const auto index = static_cast<size_t>(value);
  return names[index < N ? index : 0];
}

}  // namespace

const char* to_string(Severity s) { return name_of(s, kSeverityNames); }
const char* to_string(CaptureState s) { return name_of(s, kCaptureStateNames); }
const char* to_string(RehearsalVerdict verdict) { return name_of(verdict, kVerdictNames); }
const char* heading_word(Severity s) { return name_of(s, kSeverityHeadings); }
const char* mode_name(trace::CaptureMode mode) { return name_of(mode, kModeNames); }

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

std::vector<std::string> mode_names() { return {std::begin(kModeNames), std::end(kModeNames)}; }

std::vector<std::string> severity_names() {
  return {std::begin(kSeverityNames), std::end(kSeverityNames)};
}

}  // namespace capguard
