// graph-rebuilt-every-step: one capture site captures and instantiates the same graph again and
// again, each time replacing an exec it hardly launched (graph_lifecycle.h says what counts).
#include <fmt/format.h>

#include "rules/rule.h"
#include "rules/rule_options.h"

namespace capguard::rules {
namespace {

std::string argument(const CaptureDiff::Argument& a) {
  if (a.role == 's') return "the copy's source";
  if (a.role == 'd') return a.kernel.empty() ? "the destination" : "a destination";
  return fmt::format("argument {} of {}", a.index, kernel_name(a.kernel));
}

// What differed between consecutive captures, and the fix for that case.
std::pair<std::string, std::string> what_differed(const CaptureDiff& d) {
  if (d.scalars == 0 && d.addresses == 0 && d.identical == 0) {
    return {"capguard kept no copy of the earlier graphs to compare (a bound on its memory)",
            "keep the exec and replay it; refresh it with cudaGraphExecUpdate when its inputs "
            "change"};
  }
  if (d.scalars != 0) {
    return {fmt::format("a scalar argument of {} differed in {} of them",
                        kernel_name(d.scalar_kernel), d.scalars),
            "capture once and refresh the exec with cudaGraphExecUpdate (it takes new argument "
            "values without re-instantiating), or pass the value through device memory the graph "
            "reads"};
  }
  if (d.addresses != 0) {
    std::string moved;
    for (const CaptureDiff::Argument& a : d.moved)
      moved += (moved.empty() ? "" : ", ") + argument(a);
    return {fmt::format("only addresses differed ({}{}): each capture was bound to other "
                        "buffers (a static input moved, or a fresh memory pool per capture)",
                        moved, d.moved.size() >= 3 ? ", ..." : ""),
            "keep the exec and copy new data into its static inputs instead of rebinding them "
            "(x_static.copy_(x)), or re-point it with cudaGraphExecUpdate / "
            "cudaGraphExecKernelNodeSetParams"};
  }
  return {"nothing differed: the graphs were identical",
          "capture and instantiate once, keep the exec and replay it"};
}

bool check(const GraphFacts& facts, Draft& draft) {
  if (facts.kind != GraphFactKind::KeyRecaptured || facts.churn == nullptr) return false;
  const ChurnFacts& c = *facts.churn;
  if (c.steps < option(OptionId::kChurnSteps)) return false;
  // A graph of no nodes replays nothing: re-capturing it costs a capture and an instantiate and
  // saves no launch either way (nccl-tests' -G loop captures one per iteration where a rank has
  // nothing to enqueue). Not worth a warning; the lifecycle table still lists it.
  if (c.nodes == 0) return false;
  const double per_step = c.steps != 0 ? static_cast<double>(c.step_launches) / c.steps : 0;
  std::string cost;
  if (c.cost_ns != 0) {
    cost = fmt::format("; capture + instantiate took {:.1f} ms in all ({:.1f} us each) for {} "
                       "launches",
                       static_cast<double>(c.cost_ns) / 1e6,
                       static_cast<double>(c.cost_ns) / 1e3 / static_cast<double>(c.captures),
                       c.launches);
  }
  const auto [differed, fix] = what_differed(c.diff);
  draft.message = fmt::format(
      "this capture site captured and instantiated the same graph ({} nodes) {} times; {} "
      "times it replaced an exec launched {:.1f} times on average before it was dropped{}. "
      "Between consecutive captures {}. Fix: {}",
      c.nodes, c.captures, c.steps, per_step, cost, differed, fix);
  if (c.last_capture != nullptr) draft.capture = c.last_capture.get();
  if (c.last_instantiate.known)
    draft.related.push_back({"instantiate", "the last re-capture was instantiated here",
                             c.last_instantiate});
  return true;
}

}  // namespace

extern const Rule kGraphRebuiltEveryStep;
constinit const Rule kGraphRebuiltEveryStep{
    RuleId::kGraphRebuiltEveryStep,
    {"A CUDA graph pays off when one exec is replayed many times: capture and\n"
     "cudaGraphInstantiate cost far more than the launches a replay saves. A program that\n"
     "captures, instantiates, launches once and drops the exec every step is slower than\n"
     "launching the kernels eagerly (PyTorch #171672: reduce-overhead 10x slower than eager).\n"
     "\n"
     "A graph's key is what it does: node types, kernels, edges, each kernel's grid, block and\n"
     "shared memory, each copy's and memset's size. Addresses and scalar arguments are not in\n"
     "it. A re-capture counts as churn when the key's previous exec was the site's last capture,\n"
     "was launched at most 2 times, and was dropped alone: destroyed before the new capture, or\n"
     "after it without being launched again. capguard reports a site and key with 10 or more\n"
     "such re-captures, at the capture site, with the measured capture + instantiate time, the\n"
     "launches it bought, and what differed between consecutive captures (nothing; only the\n"
     "addresses of some arguments: a static input moved; a scalar argument).\n"
     "\n"
     "Exempt: many sizes captured up front and kept (one graph per batch size); every exec\n"
     "destroyed together and the set captured again (a teardown: sleep/wake, a mode switch),\n"
     "any number of times; graphs kept alive in a list; execs refreshed in place with\n"
     "cudaGraphExecUpdate or node SetParams; graphs of no nodes (nothing to replay, nothing to\n"
     "save). Launches are counted exactly up to 4 per exec (what the judgement needs; later\n"
     "replays are not called back, so they cost nothing).\n"
     "\n"
     "    for (step...) {\n"
     "      cudaStreamBeginCapture(s, mode); step_kernels(s, input[step]);\n"
     "      cudaStreamEndCapture(s, &g); cudaGraphInstantiate(&exec, g, 0);\n"
     "      cudaGraphLaunch(exec, s); cudaGraphExecDestroy(exec); cudaGraphDestroy(g);\n"
     "    }\n"
     "\n"
     "Fix, by what differed: identical graphs: keep the exec and replay it. A static input moved:\n"
     "copy into the static input (PyTorch: static_x.copy_(x)) instead of rebinding it, or\n"
     "re-point the exec with cudaGraphExecUpdate. A scalar changed: cudaGraphExecUpdate, or read\n"
     "the value from device memory. It is a warning: the program is correct, only slow.",
     "keep the exec and replay it; copy into static inputs; refresh with cudaGraphExecUpdate"},
    nullptr,
    nullptr,
    &check};

}  // namespace capguard::rules
