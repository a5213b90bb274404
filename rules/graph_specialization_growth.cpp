// graph-specialization-growth: a capture site keeps adding new graphs (one per input size, as a
// rule) while the program is already replaying, instead of capturing a few sizes up front.
#include <fmt/format.h>

#include "rules/rule.h"
#include "rules/rule_options.h"

namespace capguard::rules {
namespace {

bool check(const GraphFacts& facts, Draft& draft) {
  if (facts.kind != GraphFactKind::KeysAddedLate || facts.growth == nullptr) return false;
  const GrowthFacts& g = *facts.growth;
  const uint64_t late_keys_allowed = option(OptionId::kGrowthLateKeys);
  if (g.late_keys <= late_keys_allowed) return false;
  // Only sizes grow. A site whose late graphs each brought a topology of its own
  // captures other computations, not other sizes of one (PyTorch's test_graph_optims: one
  // opt.step() graph per optimizer config): padding cannot merge them, and one capture each is
  // what they cost. Nothing is reported; the lifecycle table still lists the site's graphs and
  // topologies.
  if (g.late_resized == 0) return false;
  std::string launches;
  for (const auto& [count, at_least] : g.late_launches)
    launches += fmt::format("{}{}{}", launches.empty() ? "" : ", ", count, at_least ? "+" : "");
  if (g.late_keys > g.late_launches.size()) launches += ", ...";
  std::string cost;
  if (g.late_cost_ns != 0)
    cost =
        fmt::format("; capturing them took {:.1f} ms", static_cast<double>(g.late_cost_ns) / 1e6);
  draft.message = fmt::format(
      "this capture site made {}{} distinct graphs ({} topologies), {} of them captured between "
      "replays, past {} ({} the same computation at new sizes): launches of each of those: "
      "{}{}. Every new input size costs a capture, an instantiate and graph memory. Fix: pad "
      "inputs to a few bucket sizes and capture those up front (as vLLM's "
      "cudagraph_capture_sizes does), or capture the sizes during warm-up",
      g.keys_at_least ? "at least " : "", g.keys, g.topologies, g.late_keys, late_keys_allowed,
      g.late_resized, launches, cost);
  if (g.last_capture != nullptr) draft.capture = g.last_capture.get();
  if (g.last_instantiate.known)
    draft.related.push_back(
        {"instantiate", "the last new graph was instantiated here", g.last_instantiate});
  return true;
}

}  // namespace

extern const Rule kGraphSpecializationGrowth;
constinit const Rule kGraphSpecializationGrowth{
    RuleId::kGraphSpecializationGrowth,
    {"Graphs are static: each input size (launch geometry, copy size) needs its own capture.\n"
     "A program that captures a new graph whenever a new size arrives keeps paying capture and\n"
     "instantiate time and graph memory while it serves (PyTorch warns past 8 distinct sizes; a\n"
     "text-embedding job with 318 sizes in 333 batches ran 7.2x slower).\n"
     "\n"
     "A graph's key is its node types, kernels, edges, launch geometry and copy sizes; keys of\n"
     "one topology that differ only in geometry are specializations. capguard counts, per\n"
     "capture site, the new keys captured after the program replayed since the site's previous\n"
     "capture (another exec launched, or that capture's exec launched twice; one launch right\n"
     "after capturing is a check, not serving) while an earlier exec of the site is still alive\n"
     "(specializations that accumulate), and reports a site with more than 8, at its\n"
     "capture site, with the number of distinct graphs and the launches each late one got.\n"
     "\n"
     "Only sizes grow: a site whose late graphs each have a topology of their own captures other\n"
     "computations (a loop over optimizer configs, one opt.step() graph each), not sizes, and is\n"
     "not reported.\n"
     "\n"
     "Exempt: any number of sizes captured in a burst before replaying them (vLLM, SGLang); a\n"
     "mode switch that captures every size again (only its first capture follows replays);\n"
     "a teardown and re-capture of known graphs; a sweep that destroys each size's exec before\n"
     "capturing the next (a benchmark over message sizes: one size alive at a time). Launches\n"
     "are counted exactly up to 4 per exec (N+ past that).\n"
     "\n"
     "    for (request...) {\n"
     "      if (!graphs.count(request.size)) graphs[request.size] = capture(request.size);\n"
     "      cudaGraphLaunch(graphs[request.size], s);\n"
     "    }\n"
     "\n"
     "Fix: pad to a few bucket sizes and capture those up front, or capture the sizes you expect\n"
     "during warm-up.",
     "pad to a few bucket sizes captured up front"},
    nullptr,
    nullptr,
    &check};

}  // namespace capguard::rules
