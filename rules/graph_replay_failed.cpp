// graph-replay-failed: a sticky error surfacing after graph launches, attributed to the graphs
// in flight.
#include <fmt/format.h>

#include "model/cuda_errors.h"
#include "rules/rule.h"

namespace capguard::rules {
namespace {

bool check(const GraphFacts& facts, Draft& draft) {
  if (facts.kind != GraphFactKind::ReplayFailed || facts.ev == nullptr) return false;
  const trace::ApiEvent& ev = *facts.ev;
  const trace::ApiDomain domain =
      ev.has(trace::Field::Domain) ? ev.domain : classify_api(ev.api).domain;
  const std::string result = fmt::format("{} ({})", result_name(ev.result, domain), ev.result);
  const bool certain = !facts.in_flight.empty();
  const auto& graphs = certain ? facts.in_flight : facts.maybe_in_flight;
  std::string names;
  for (size_t i = 0; i < graphs.size() && i < 3; ++i)
    names += (i != 0 ? ", " : "") + describe_exec(*graphs[i]);
  if (graphs.size() > 3) names += fmt::format(" and {} more", graphs.size() - 3);
  draft.message = fmt::format(
      "{} returned {}: a kernel faulted, and the context is unusable from here on. {} {}",
      describe_site(facts.where), result,
      certain ? "Graph work was in flight, launched since the last successful synchronize:"
              : "No launch is known to be unfinished, but these graphs were being replayed "
                "(capguard records only each exec's first launches) and may have been running:",
      names + ".");
  const ExecState* culprit = nullptr;
  for (const ExecState* exec : graphs) {
    if (!exec->hits.empty()) {
      culprit = exec;
      break;
    }
  }
  if (culprit != nullptr) {
    const GraphHit& hit = culprit->hits.front();
    draft.message += fmt::format(
        " Likely cause: in graph exec #{}, its {} holds {}, freed by {} before this "
        "replay (see replay-after-free)",
        culprit->serial, describe_node_ref(*culprit, hit.ref), hex(hit.ref.address), hit.free.api);
    draft.related.push_back(
        {"free", fmt::format("{} freed {}", hit.free.api, hex(hit.block.base)), hit.free});
  }
  for (size_t i = 0; i < graphs.size() && i < 3; ++i) {
    const ExecState& exec = *graphs[i];
    if (exec.last_launch.known)
      draft.related.push_back(
          {"graph-launch", fmt::format("{} launched here", describe_exec(exec)), exec.last_launch});
    add_exec_sites(draft, exec);
  }
  return true;
}

}  // namespace

extern const Rule kGraphReplayFailed;
constinit const Rule kGraphReplayFailed{
    RuleId::kGraphReplayFailed,
    {"A kernel that faults inside a graph replay does not fail cudaGraphLaunch: the launch is\n"
     "asynchronous. The error (700 cudaErrorIllegalAddress, 719 cudaErrorLaunchFailure, 716\n"
     "misaligned address, 715 illegal instruction, ...) surfaces at the next synchronize, or any\n"
     "later call, and stays: the context is unusable from then on. Nothing connects it to the "
     "graph\n"
     "that was running. capguard names the graph execs launched on that stream (any stream, for a\n"
     "device synchronize) since its last successful synchronize, where and from which capture\n"
     "they were made, and folds in the cause when replay-after-free found one. Later calls that\n"
     "return the same sticky error are counted as consequences.\n"
     "\n"
     "    cudaGraphLaunch(exec, s);\n"
     "    cudaStreamSynchronize(s);          // 700: the replay faulted\n"
     "\n"
     "Outside captures capguard records each exec's first launches (and every launch of an exec\n"
     "that a free touched), so a fault deep in a long replay loop is attributed to the graphs\n"
     "being replayed with a \"may have been running\" wording.\n"
     "\n"
     "Fix: find the node that faults (compute-sanitizer on one replay), and check every buffer\n"
     "the graph holds is alive and large enough (see replay-after-free).",
     "run one replay under compute-sanitizer; check the buffers the graph holds are still alive"},
    nullptr,
    nullptr,
    &check};

}  // namespace capguard::rules
