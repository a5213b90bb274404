// The stage after the rules and the symbolizer: what the user asked not to see, taken out of
// the report before anything renders it. In order: the built-in suppressions
// (report/default_suppressions.cpp), a suppressions file, then a baseline. The command line
// only names the files (and checks them up front); the report then goes down to the renderers.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/report.h"

namespace capguard {

struct PostProcessOptions {
  bool default_suppressions = true;
  std::string suppressions;  // --suppressions FILE; empty: none
  std::string baseline;      // --baseline FILE (an earlier JSON or SARIF report); empty: none
};

// The files checked before any work is done (a malformed one is a usage error): one line per
// problem of the suppressions file; the baseline's problem.
std::vector<std::string> check_suppressions_file(const std::string& path);
std::optional<std::string> check_baseline_file(const std::string& path);

// The suppressions built into capguard, applied to `report`.
void apply_default_suppressions(Report& report);

// Applies the stage to a symbolized report. `say` gets the lines for the user: how many
// findings each suppression removed (and the stale ones), then the baseline's new, known and
// gone counts.
void post_process(Report& report, const PostProcessOptions& options,
                  const std::function<void(std::string_view)>& say);

}  // namespace capguard
