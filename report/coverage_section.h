// Graph coverage after warm-up (Report::coverage): the words the text section, the HTML section
// and SARIF's notes share, and the JSON array "graph_coverage" (with "graph_coverage_job", the
// processes' counts added up, when there are several).
#pragma once

#include <string>

#include "model/report.h"
#include "model/rule_info.h"
#include "report/json_writer.h"

namespace capguard {

// "95.2% of 12000 kernels ran inside graph replays after warm-up (11424 in 1000 replays of 3
// graphs; 576 launched eagerly, in 288 phases between replays, at most 2 in one)"
std::string coverage_summary(const CoverageInfo& coverage);
// "576 eager launches of add_kernel (73728 threads) at step.py:42 (f), in 288 phases"
std::string eager_site_line(const EagerSite& site);
// The kernel's name as reports print it (demangled, shortened; "an unnamed kernel").
std::string eager_kernel_name(const EagerSite& site);
// "95.2%": the share of kernels run inside graph replays, to one decimal.
std::string coverage_share_words(const CoverageInfo& coverage);
// SARIF's descriptor for the eager hot spots' notes (no rule of rules.def: never a finding).
inline constexpr RuleInfo kEagerHotSpotRule{
    "eager-launch-hot-spot", Severity::Note,
    "kernels launched outside graph replays after the first replay (graph coverage)",
    "From the first graph replay of a process on, capguard counts the kernels that ran inside\n"
    "graph replays and those launched eagerly. Each note is one of the busiest places that\n"
    "launched eagerly: an op torch.compile left out of its graph (a graph break), a size a\n"
    "serving engine has no graph for, a kernel launched between replays.\n"
    "\n"
    "Fix: capture the work into the graph (remove the graph break, capture that size, move the\n"
    "kernel inside the captured region), or accept it; --min-graph-coverage PCT gates on the\n"
    "share.",
    "capture the eager work into the graph, or gate on the share with --min-graph-coverage"};
// Sites a section shows (JSON has all the report keeps).
inline constexpr size_t kEagerSitesShown = 8;
// "the job (3 processes, ...)": the words before the job's figure, when several processes have one.
std::string coverage_job_words(size_t processes);
// The text report's section (each process, then the job's figure when there are several): empty
// when no process replayed a graph.
std::string coverage_text(const Report& report);
void write_coverage_json(JsonWriter& json, const Report& report);

}  // namespace capguard
