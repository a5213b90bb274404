// Turning an analysis into the requested outputs, and the exit status it implies.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "cli/merge_reports.h"
#include "engine/analyzer.h"

namespace capguard::cli {

struct OutputTarget {
  ReportFormat format = ReportFormat::text;
  std::string path;  // empty: stderr; "-": stdout
};

// Checks formats and targets before any work is done: an unknown FORMAT: prefix, or two targets
// naming the same file (or stdout twice), is a message (exit 2).
std::optional<std::string> resolve_outputs(const ReportOptions& options,
                                           std::vector<OutputTarget>& targets);

// A target that names one of the files `paths` stands for (a trace, a trace in a directory, or
// a trace's .symbols or .tests), through whatever link: a message (exit 2), so that nothing
// read is overwritten.
std::optional<std::string> check_outputs_not_inputs(const std::vector<OutputTarget>& targets,
                                                    const std::vector<std::string>& paths);

// The --baseline and --suppressions files, checked before any work is done (post_process.h):
// a message (exit 2) when one is malformed; and the --rule-option settings, set for the
// analysis (rules/rule_options.h) or a message.
std::optional<std::string> check_post_process_files(const ReportOptions& options);

// Reads every trace into one analysis through the engine's pipeline: replayed, symbolized
// (first saving the frames beside each trace as <trace>.symbols when save_symbol_caches), then
// the suppressions and baseline applied.
// Problems that make a trace unusable are returned as one line each (without a newline).
// Traces that a merged JSON report already judged (`covered`: the same file name and, read
// from the trace's header, the same process) are not read again.
std::vector<std::string> analyze_traces(const std::vector<std::string>& paths,
                                        const ReportOptions& options, Analysis& analysis,
                                        bool save_symbol_caches = false,
                                        const CoveredTraces& covered = {});

// Writes every target (see ReportFile: regular files atomically, devices and FIFOs in place).
// False after printing a line for each target that could not be written.
bool write_outputs(const Report& report, const std::vector<OutputTarget>& targets,
                   const ReportOptions& options);

// Prints "capguard: LINE" on stderr, with control characters escaped (text from a trace or a
// suppressions file can neither forge lines nor drive the terminal).
void say(std::string_view line);

// The whole output of a run or report: the lines about report.problems first, then every
// target, so that the SUMMARY line is the last one on stderr. When nothing at all was read,
// the text report on stderr is left out (the problem lines say it all); files are written
// regardless. False when a target could not be written.
bool write_report(const Report& report, const std::vector<OutputTarget>& targets,
                  const ReportOptions& options, std::string_view before_summary = {});

// The names of cli/formats.def, for --format's choices, and the format of a name.
std::vector<std::string> format_names();
std::optional<ReportFormat> format_named(std::string_view name);
const char* format_name(ReportFormat format);

}  // namespace capguard::cli
