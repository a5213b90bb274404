// graph-argument-frozen: a kernel node's scalar arguments ('a' records, format.h v9) against the
// same kernel's eager launches before the capture, judged when the exec's life ends.
#include <doctest/doctest.h>

#include <vector>

#include "tests/event_builder.h"
#include "trace/graph_record.h"
#include "trace/kernel_record.h"

using namespace capguard;
using namespace capguard::testing;

namespace {

constexpr uint64_t kGraph = 0x6701;
constexpr uint64_t kExec = 0x7701;

Ev end_graph(uint64_t s) { return with_graph(end(s), kGraph); }
Ev instantiate() { return with_exec(with_graph(call("cudaGraphInstantiate"), kGraph), kExec); }
Ev graph_launch(uint64_t s) { return with_exec(call("cudaGraphLaunch").stream(s), kExec); }
Ev set_params(uint32_t node) {
  Ev ev = with_exec(call("cudaGraphExecKernelNodeSetParams"), kExec);
  ev.e.node_index = node;
  ev.e.set(Field::NodeIndex);
  return ev;
}

// Argument 1 (a 4-byte int) was `eager` in the last eager runs (oldest first) and `captured`
// in the graph; argument 0 is a pointer the graph holds (no scalar).
void walk(Sim& sim, std::vector<uint32_t> eager, uint32_t captured, uint64_t eager_grid = 1) {
  trace::GraphNodeRecord node;
  node.exec = kExec;
  node.type = trace::kNodeKernel;
  node.name = "_Z4stepPii";
  sim.replay.graph_node(node);
  const std::vector<trace::KernelArg> own{{1, 4, captured}};
  trace::KernelArgsRecord args;
  args.exec = kExec;
  args.geometry_count = 7;
  for (uint64_t& g : args.geometry) g = 1;
  args.args = own;
  sim.replay.kernel_args(args);
  for (size_t i = 0; i < eager.size(); ++i) {
    const std::vector<trace::KernelArg> run{{1, 4, eager[eager.size() - 1 - i]}};
    args.order = static_cast<uint32_t>(i + 1);
    args.geometry[0] = eager_grid;
    args.args = run;
    sim.replay.kernel_args(args);
  }
  trace::GraphRecord g;
  g.exec = kExec;
  g.nodes = 1;
  sim.replay.graph(g);
}

Sim& captured_then_replayed(Sim& sim, std::vector<uint32_t> eager, uint32_t captured,
                            uint64_t eager_grid = 1) {
  sim(begin(kS))(launch(kS))(end_graph(kS))(instantiate());
  walk(sim, eager, captured, eager_grid);
  return sim;
}

}  // namespace

TEST_CASE("graph-argument-frozen: a step counter passed by value, at the capture") {
  Sim sim;
  captured_then_replayed(sim, {1, 2, 3}, 4)(graph_launch(kS))(graph_launch(kS));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"graph-argument-frozen"});
  const Finding& f = r.findings[0];
  CHECK(f.severity == Severity::Warning);
  CHECK(f.message.find("argument #1 was 1, 2, 3 in its last 3 eager runs and is 4 in every "
                       "replay") != std::string::npos);
  CHECK(f.message.find("step") != std::string::npos);  // the kernel, demangled
  CHECK(f.capture.has_value());                        // at the capture that made the graph
  CHECK(f.location.seq == 1);                          // cudaStreamBeginCapture's
}

TEST_CASE("graph-argument-frozen twin: a value that never changed during warm-up") {
  Sim sim;
  captured_then_replayed(sim, {7, 7, 7}, 7)(graph_launch(kS))(graph_launch(kS));
  CHECK(sim.finish().findings.empty());
}

TEST_CASE("graph-argument-frozen twin: the node is set again before each replay") {
  Sim sim;
  captured_then_replayed(sim, {1, 2, 3}, 4)(graph_launch(kS))(set_params(0))(graph_launch(kS));
  CHECK(sim.finish().findings.empty());
}

TEST_CASE("graph-argument-frozen twin: fewer eager runs than eager-runs, or another geometry") {
  Sim few;
  captured_then_replayed(few, {2, 3}, 4)(graph_launch(kS))(graph_launch(kS));
  CHECK(few.finish().findings.empty());
  Sim other_shape;  // the eager runs launched another grid: not the same code
  captured_then_replayed(other_shape, {1, 2, 3}, 4, 8)(graph_launch(kS))(graph_launch(kS));
  CHECK(other_shape.finish().findings.empty());
}

TEST_CASE("graph-argument-frozen: a count going down, and a random offset stepping by 4") {
  Sim down;
  captured_then_replayed(down, {10, 9, 8}, 7)(graph_launch(kS))(graph_launch(kS));
  CHECK(down.finish().findings.size() == 1);
  Sim offset;
  captured_then_replayed(offset, {0, 4, 8}, 12)(graph_launch(kS))(graph_launch(kS));
  CHECK(offset.finish().findings.size() == 1);
}

TEST_CASE("graph-argument-frozen twin: a serving loop's sizes, one graph per size") {
  Sim smaller;  // sizes warmed up 2, 4, 8 (numel 256, 512, 1024), then the graph for size 1
  captured_then_replayed(smaller, {256, 512, 1024}, 128)(graph_launch(kS))(graph_launch(kS));
  CHECK(smaller.finish().findings.empty());
  Sim warmed;  // the graph for a size the warm-up ran
  captured_then_replayed(warmed, {256, 512, 1024}, 512)(graph_launch(kS))(graph_launch(kS));
  CHECK(warmed.finish().findings.empty());
  Sim back_and_forth;  // a length that went up and down is no counter
  captured_then_replayed(back_and_forth, {3, 9, 5}, 11)(graph_launch(kS))(graph_launch(kS));
  CHECK(back_and_forth.finish().findings.empty());
}

TEST_CASE("graph-argument-frozen twin: replayed once is not replayed frozen") {
  Sim sim;
  captured_then_replayed(sim, {1, 2, 3}, 4)(graph_launch(kS));
  CHECK(sim.finish().findings.empty());
}
