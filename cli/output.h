// Turning an analysis into the requested outputs, and the exit status it implies.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/analyzer.h"
#include "cli/commands.h"

namespace capguard::cli {

struct OutputTarget {
  std::string format;  // text | json | sarif | junit | html | dot
  std::string path;    // empty: stderr; "-": stdout
};

// Checks formats and targets before any work is done; a message on failure (exit 2).
std::optional<std::string> resolve_outputs(const ReportOptions& options,
                                           std::vector<OutputTarget>& targets);

// Reads every trace into one analysis, symbolizes it (first saving the frames beside each
// trace as <trace>.symbols when save_symbol_caches) and applies the suppressions and baseline.
// Problems that make a trace unusable are returned as one line each (without a newline).
std::vector<std::string> analyze_traces(const std::vector<std::string>& paths,
                                        const ReportOptions& options, Analysis& analysis,
                                        bool save_symbol_caches = false);

// Writes every target (files atomically: temp file + rename). False after printing a line for
// a target that could not be written.
bool write_outputs(const Report& report, const std::vector<OutputTarget>& targets,
                   const ReportOptions& options);

bool has_findings_at(const Report& report, const std::string& fail_on);

}  // namespace capguard::cli
