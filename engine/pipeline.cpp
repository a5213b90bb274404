#include "engine/pipeline.h"

#include "model/frame_owner.h"
#include "model/framework_calls.h"
#include "rules/capture_ended_by_exception.h"
#include "rules/rank_collective_mismatch.h"
#include "rules/rule_options.h"
#include "symbolize/module_cache.h"
#include "symbolize/symbol_cache.h"
#include "symbolize/symbolizer.h"

namespace capguard {

std::vector<std::string> run_pipeline(const std::vector<std::string>& traces,
                                      const PipelineOptions& options, Analysis& analysis,
                                      const std::function<void(std::string_view)>& warn) {
  std::vector<std::string> problems;
  analysis.report.rule_options = rules::changed_rule_options();  // the thresholds judged by
  analyze_trace_files(traces, analysis, options.jobs);  // on the machine's cores, one trace each
  name_regions_never_executed(analysis);
  for (const auto& error : analysis.errors)
    problems.push_back("cannot read trace: " + error.to_string());
  for (const auto& skipped : analysis.skipped_lines)
    problems.push_back("damaged trace line skipped: " + skipped.to_string());
  for (const auto& warning : analysis.warnings) warn("warning: " + warning);
  SymbolCache cache;  // frames resolved where the traces were recorded, when saved beside them
  // Each trace's frames its process's alone: processes of several hosts share pids.
  const auto& processes = analysis.report.processes;
  for (size_t i = 0; i < processes.size(); ++i) {
    if (processes[i].trace_path.empty()) continue;
    const auto process = static_cast<uint32_t>(i + 1);
    if (auto damaged = cache.load_beside(processes[i].trace_path, process))
      warn("warning: ignoring " + *damaged);
  }
  ModuleCache module_cache(
      symbol_cache_dir(options.symbol_cache.empty() ? nullptr : options.symbol_cache.c_str()));
  const SymbolizeStats stats = symbolize(analysis.report, analysis.modules, &cache,
                                         UserCode(options.user_code, options.source_root),
                                         &module_cache, options.debuginfod);
  // Both need the frames: a capture ended by a Python exception is seen in its end's Python
  // stack, and is named in the framework's words like every other finding.
  rules::find_captures_ended_by_exception(analysis.report);
  name_framework_calls(analysis.report);
  // Capture sites are compared across ranks by their lines: after symbolization.
  rules::find_rank_collective_mismatches(analysis.report);
  if (stats.deep_inline_addresses != 0)
    warn("warning: " + std::to_string(stats.deep_inline_addresses) +
         " addresses lie in inline scopes nested deeper than " + std::to_string(kMaxInlineDepth) +
         " levels: only their outer function is shown, not the functions inlined there");
  for (const std::string& module : stats.over_budget)
    warn("warning: not reading " + module +
         " for names: its compressed debug sections would inflate past the symbolizer's "
         "budget (256 MiB a module, 1 GiB in all); its frames show module and offset only");
  // Saved before anything is filtered: suppressions match on these frames when the traces are
  // re-analyzed where the binaries are not.
  if (options.save_symbol_caches)
    for (const auto& process : analysis.report.processes)
      if (auto failed = SymbolCache::save_beside(process.trace_path, process.pid, analysis.report))
        problems.push_back(*failed);
  post_process(analysis.report, options.post, warn);
  return problems;
}

}  // namespace capguard
