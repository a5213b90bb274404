// graph-rebuilt-every-step: the same capture site captured and instantiated again and again
// with an unchanged topology, each exec used only a few times.
#include <fmt/format.h>

#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check(const GraphFacts& facts, Draft& draft) {
  if (facts.kind != GraphFactKind::Rebuilt) return false;
  std::string cost;
  if (facts.rebuild_cost_ns != 0) {
    cost = fmt::format("; capture + instantiate took {:.1f} ms in all ({:.1f} us per rebuild)",
                       static_cast<double>(facts.rebuild_cost_ns) / 1e6,
                       static_cast<double>(facts.rebuild_cost_ns) / 1e3 / facts.rebuilds);
  }
  draft.message = fmt::format(
      "the same capture was captured and instantiated {} times with an unchanged topology ({} "
      "nodes), and each exec was launched at most {} time(s){}. Rebuilding a graph every step "
      "costs more than the launches it saves: keep the exec and replay it, or refresh it with "
      "cudaGraphExecUpdate",
      facts.rebuilds, facts.nodes, facts.max_launches, cost);
  if (facts.rebuilt_capture != nullptr) {
    draft.capture = facts.rebuilt_capture;
    add_capture_begin(draft, *facts.rebuilt_capture, "capture-begin");
    draft.related.back().detail = fmt::format("the capture site (last capture: {})",
                                              describe_capture(*facts.rebuilt_capture));
  }
  return true;
}

}  // namespace

extern const Rule kGraphRebuiltEveryStep;
constinit const Rule kGraphRebuiltEveryStep{
    {"graph-rebuilt-every-step", Severity::Warning,
     "the same capture is captured and instantiated again and again with an unchanged topology",
     "A CUDA graph pays off when one exec is replayed many times: capture and\n"
     "cudaGraphInstantiate cost far more than the launches a replay saves. A program that\n"
     "captures, instantiates, launches once or twice and destroys the graph every step is\n"
     "slower than launching the kernels eagerly (PyTorch #171672: reduce-overhead 10x slower\n"
     "than eager for this reason).\n"
     "\n"
     "capguard reports a capture site (the stack of cudaStreamBeginCapture) whose graphs had the\n"
     "same topology (node types, kernels, edges) at least 10 times, when no exec made from them "
     "was\n"
     "launched 4 times or more; the finding sits at the last instantiate and says how many\n"
     "rebuilds, and what capture + instantiate cost (begin capture to instantiate, summed). It\n"
     "is a warning, not an error: the program is correct, only slow.\n"
     "\n"
     "    for (step...) {\n"
     "      cudaStreamBeginCapture(s, mode); step_kernels(s); cudaStreamEndCapture(s, &g);\n"
     "      cudaGraphInstantiate(&exec, g, 0);   // every step\n"
     "      cudaGraphLaunch(exec, s); cudaGraphExecDestroy(exec); cudaGraphDestroy(g);\n"
     "    }\n"
     "\n"
     "Fix: capture and instantiate once and replay the exec; when arguments change, capture into\n"
     "a new graph and apply it with cudaGraphExecUpdate (cheap when the topology is unchanged), "
     "or\n"
     "set node parameters (cudaGraphExecKernelNodeSetParams).",
     "instantiate once and replay, or refresh the exec with cudaGraphExecUpdate"},
    nullptr,
    nullptr,
    &check};

}  // namespace capguard::rules
