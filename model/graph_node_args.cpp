// GraphLifetime's part for frozen values (node_args.h): a kernel node's 'a' records kept with
// its exec, handed to the rules as facts when the exec's life ends (destroyed, or alive at the
// end), when its launches and updates are all known.
#include <algorithm>

#include "model/graph_lifetime.h"

namespace capguard {

void GraphLifetime::on_kernel_args(const trace::KernelArgsRecord& record) {
  ExecState* state = exec(record.exec);
  if (state == nullptr || state->walked) return;  // only during its walk, as its 'g' records
  if (record.node >= state->nodes.size() || state->nodes[record.node].type != trace::kNodeKernel)
    return;  // before its node's 'g' record, or not a kernel: a damaged trace
  std::vector<NodeArgs>& all = state->node_args;
  if (all.empty() || all.back().node != record.node) {
    if (record.order != 0 || all.size() >= kMaxNodeArgsPerExec) return;  // the node's own first
    all.push_back({record.node, {}, {}});
  } else if (record.order != all.back().eager.size() + 1 ||
             all.back().eager.size() >= kMaxEagerArgLaunches) {
    return;  // out of order or past the bound
  }
  ArgLaunch launch;
  launch.has_geometry = record.geometry_count == 7;
  std::copy(record.geometry, record.geometry + 7, launch.geometry);
  launch.args.assign(record.args.begin(), record.args.end());
  if (record.order == 0)
    all.back().graph = std::move(launch);
  else
    all.back().eager.push_back(std::move(launch));
}

void GraphLifetime::node_args_facts(const ExecState& state) {
  for (const NodeArgs& args : state.node_args) {
    if (args.eager.empty()) continue;
    auto facts = std::make_shared<NodeArgsFacts>();
    facts->args = args;
    if (args.node < state.nodes.size()) facts->kernel = state.nodes[args.node].name;
    facts->exec = state.handle;
    facts->exec_serial = state.serial;
    facts->launches = state.launches;
    facts->updated = state.updated || state.all_dropped ||
                     (args.node < state.nodes.size() && state.nodes[args.node].dropped);
    facts->instantiate = state.instantiate;
    facts->capture = state.capture;
    GraphFacts graph_facts;
    graph_facts.kind = GraphFactKind::NodeArguments;
    graph_facts.where = state.capture ? state.capture->begin : state.instantiate;
    graph_facts.node_args = std::move(facts);
    facts_.push_back(std::move(graph_facts));
  }
}

}  // namespace capguard
