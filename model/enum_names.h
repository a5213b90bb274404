// From and to the names of enum_names.def, beyond to_string (model/report.h) and mode_name
// (model/capture_model.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/report.h"
#include "trace/format.h"

namespace capguard {

const char* heading_word(Severity s);  // "ERROR", as the text report's headings say it
std::optional<Severity> severity_named(std::string_view name);  // "warning"; nullopt: unknown
std::vector<std::string> severity_names();                      // lowest first
// Capture modes (--rehearse-mode): "thread_local"; nullopt: unknown.
std::optional<trace::CaptureMode> mode_named(std::string_view name);
std::vector<std::string> mode_names();

}  // namespace capguard
