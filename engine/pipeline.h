// The analysis pipeline, from trace files to the report the renderers print: each trace
// replayed through the model and the rules, the frames symbolized (from the binaries, or the
// .symbols cache beside a trace recorded elsewhere), the frames saved beside the traces that
// `run` just wrote, then the post-processing stage (post_process.h: built-in suppressions,
// suppression file, baseline). The command line names the files and where the report goes.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/analyzer.h"
#include "engine/post_process.h"

namespace capguard {

struct PipelineOptions {
  std::vector<std::string> user_code;  // --user-code globs
  std::string source_root;             // absolute; relative --user-code globs start here
  bool save_symbol_caches = false;     // write <trace>.symbols (capguard run)
  PostProcessOptions post;             // what is taken out of the report, last
  // The persistent symbol cache (symbolize/module_cache.h): a directory, "off", or "" for
  // CAPGUARD_SYMBOL_CACHE or the XDG default.
  std::string symbol_cache;
  bool debuginfod = false;  // --debuginfod: DEBUGINFOD_URLS is ignored otherwise
  unsigned jobs = 0;        // traces analysed at once (-j); 0: the machine's cores
};

// Analyzes `traces` (files) into `analysis`. Returns one line per problem that made a trace
// (or its symbol cache) unusable; `warn` gets the lines worth a word that are not problems,
// and the post-processing stage's counts.
std::vector<std::string> run_pipeline(const std::vector<std::string>& traces,
                                      const PipelineOptions& options, Analysis& analysis,
                                      const std::function<void(std::string_view)>& warn);

}  // namespace capguard
