// The analysis pipeline, from trace files to the report the renderers print: each trace
// replayed, the frames symbolized (from the binaries, or the .symbols cache beside a trace
// recorded elsewhere), the frames saved beside the traces that `run` just wrote, the built-in
// suppressions applied. What the command line adds on top (which files, suppressions and
// baseline files, where the report goes) stays in cli/.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/analyzer.h"

namespace capguard {

struct PipelineOptions {
  std::vector<std::string> user_code;  // --user-code globs
  std::string source_root;             // absolute; relative --user-code globs start here
  bool save_symbol_caches = false;     // write <trace>.symbols (capguard run)
  bool default_suppressions = true;
  // The persistent symbol cache (symbolize/module_cache.h): a directory, "off", or "" for
  // CAPGUARD_SYMBOL_CACHE or the XDG default.
  std::string symbol_cache;
};

// The suppressions built into capguard (report/default_suppressions.cpp), applied to `report`.
void apply_default_suppressions(Report& report);

// Analyzes `traces` (files) into `analysis`. Returns one line per problem that made a trace
// (or its symbol cache) unusable; `warn` gets the lines worth a word that are not problems.
std::vector<std::string> run_pipeline(const std::vector<std::string>& traces,
                                      const PipelineOptions& options, Analysis& analysis,
                                      const std::function<void(std::string_view)>& warn);

}  // namespace capguard
