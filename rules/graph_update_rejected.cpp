// graph-update-rejected: cudaGraphExecUpdate failed; which node, what changed.
#include <fmt/format.h>

#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check(const GraphFacts& facts, Draft& draft) {
  if (facts.kind != GraphFactKind::UpdateRejected) return false;
  std::string node;
  if (facts.details_known && facts.error_type != 0xff) {
    node = facts.error_type == trace::kNodeKernel
               ? fmt::format(" at the kernel node {}", kernel_name(facts.error_name))
               : fmt::format(" at a {} node", trace::graph_node_type_name(facts.error_type));
  } else if (facts.details_known) {
    node = " (CUDA names no node for this reason)";
  }
  draft.message = fmt::format(
      "{} rejected the update of {}: {}{}. The exec keeps its old graph; a program that then "
      "re-instantiates pays the full instantiate each time",
      describe_site(facts.where),
      facts.exec != nullptr ? describe_exec(*facts.exec) : std::string("a graph exec"),
      facts.details_known ? trace::graph_update_result_text(facts.update_result)
                          : "cudaErrorGraphExecUpdateFailure (details not recorded)",
      node);
  if (facts.update_capture != nullptr) {
    add_capture_begin(draft, *facts.update_capture, "capture-begin");
    draft.related.back().detail =
        fmt::format("the new graph was captured by {}", describe_capture(*facts.update_capture));
  }
  if (facts.exec != nullptr) {
    draft.related.push_back(
        {"instantiate",
         fmt::format("{} instantiated here from its first graph", describe_exec(*facts.exec)),
         facts.exec->instantiate});
    if (facts.exec->capture != nullptr) {
      add_capture_begin(draft, *facts.exec->capture, "capture-begin");
      draft.related.back().detail = fmt::format("the exec's graph was captured by {}",
                                                describe_capture(*facts.exec->capture));
    }
  }
  return true;
}

}  // namespace

extern const Rule kGraphUpdateRejected;
constinit const Rule kGraphUpdateRejected{
    RuleId::kGraphUpdateRejected,
    {"cudaGraphExecUpdate (cuGraphExecUpdate) refreshes an instantiated graph in place when only\n"
     "parameters changed - much cheaper than a new instantiate. When the new graph differs in\n"
     "topology (nodes or edges added or removed), in a node's type, or in ways an update cannot\n"
     "take (kernel from another context, unsupported node type, memset/memcpy shape), CUDA "
     "returns\n"
     "cudaErrorGraphExecUpdateFailure (910) and the message \"violated constraints specific to\n"
     "instantiated graph update\" without saying which node. Programs then fall back to a full\n"
     "re-instantiate every time, silently (tiny-cuda-nn #206, ik_llama.cpp #1029).\n"
     "\n"
     "capguard names the reason (cudaGraphExecUpdateResult, in words), the node CUDA blames\n"
     "(its type, and its kernel for a kernel node), where the exec was instantiated and where the\n"
     "new graph was captured. Measured on CUDA 13.0: a changed kernel function, kernel\n"
     "arguments and launch dimensions update fine; an added node is \"topology changed\" (no node\n"
     "named); a kernel replaced by a memset is \"node type changed\" at that node.\n"
     "\n"
     "    cudaGraphExecUpdate(exec, new_graph, &info);  // 910, info.result == TopologyChanged\n"
     "\n"
     "It is a warning: the program usually recovers, but pays a full instantiate each time.\n"
     "Fix: keep the topology fixed across steps (same nodes in the same order; disable\n"
     "branches with parameters rather than removing nodes), or keep one exec per topology.",
     "keep the captured topology identical between updates, or keep one exec per topology"},
    nullptr,
    nullptr,
    &check};

}  // namespace capguard::rules
