// --suppressions and --baseline: checked up front (a malformed file is a usage error), applied
// to the report before it is rendered.
#pragma once

#include <optional>
#include <string>

#include "model/report.h"

namespace capguard::cli {

// Parses the file; one message per problem, joined by newlines, on failure.
std::optional<std::string> check_suppressions_file(const std::string& path);
// Removes the suppressed findings and prints, to stderr, how many each entry removed.
void apply_suppressions_file(const std::string& path, Report& report);

std::optional<std::string> check_baseline_file(const std::string& path);
// Removes the findings the baseline already has and prints how many were new, known and gone.
void apply_baseline_file(const std::string& path, Report& report);

}  // namespace capguard::cli
