// The analyzer's entry point: replays traces through the capture model and the rules.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/report.h"
#include "symbolize/modules.h"
#include "trace/reader.h"

namespace capguard {

// Everything learned from a set of traces. Locations hold raw addresses; symbolize() fills in
// their frames afterwards from `modules`.
struct Analysis {
  Report report;
  std::vector<ProcessModules> modules;   // one per process
  std::vector<trace::ReadError> errors;  // unreadable or damaged traces
  // Damaged lines skipped (reading went on after them), at most kSkippedLinesNamed per trace
  // named; and what else is worth a word about a trace that was read (undefined stack ids...).
  std::vector<trace::ReadError> skipped_lines;
  std::vector<std::string> warnings;
  // What the analysis could not do in full within its memory budgets (docs/security.md): a
  // report that would pass exits 3 instead.
  std::vector<std::string> incomplete;
  // Input: the capture mode rehearsed regions are judged against (--rehearse-mode).
  trace::CaptureMode rehearse_mode = trace::CaptureMode::Global;
  // The --rehearse globs the traces name ('q' records), each once, at most kMaxRehearseGlobs.
  std::vector<std::string> rehearse_globs;
};

inline constexpr size_t kMaxRehearseGlobs = 64;

inline constexpr uint64_t kSkippedLinesNamed = 10;

// Replays one trace, appending its process, captures and findings to `analysis`. A damaged
// trace contributes what was read before the damage plus an entry in analysis.errors. `threads`:
// how many helper threads cut a large file into lines and parse its events ahead of this one,
// which replays them (trace/parse_ahead.h); the result is the same either way.
void analyze_trace(const std::string& path, Analysis& analysis,
                   trace::ReadThreads threads = trace::ReadThreads::sharing_cpus());

// Replays each trace on its own (analyze_trace into an Analysis of its own), on `jobs` threads
// at once (0: the machine's cores), and appends them in the order of `paths`. Memory
// stays bounded per worker: each holds one trace's replay (the budgets of docs/security.md),
// and the report grows by what each trace found. The result is the same for any `jobs`. A large
// trace gets a second thread to read it only while the workers leave a CPU for each: with one
// trace or few, not when every CPU already replays one.
void analyze_trace_files(const std::vector<std::string>& paths, Analysis& analysis, unsigned jobs);

// Appends `from` (one trace's, or one node's) to `into`; process indexes and capture ids move on.
// `last_capture`: as append_report's.
void append_analysis(Analysis& into, Analysis&& from, uint32_t* last_capture = nullptr);

// After every trace: each --rehearse glob that no rehearsed region of any process matched gets
// a "never_executed" verdict, and the analysis is incomplete (a gate must not pass on a
// region that never ran).
void name_regions_never_executed(Analysis& analysis);
// Adds a --rehearse glob (from `run`'s options or a trace's 'q' record), each once, at most
// kMaxRehearseGlobs.
void add_rehearse_glob(Analysis& analysis, std::string_view glob);

}  // namespace capguard
