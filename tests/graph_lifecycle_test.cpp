// Graph lifecycles: churn, specialization growth, what is exempt, and the lifecycle
// table, fed fabricated calls and graph records the way the trace reader would. The interposer's
// record policy is simulated (Sim): only each exec's first launches reach the analyzer.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/event_builder.h"
#include "trace/graph_record.h"

using namespace capguard;
using namespace capguard::testing;

namespace {

constexpr uint64_t kGraph = 0x6701;
constexpr uint64_t kExec = 0x7701;
constexpr uint64_t kBuf = 0x7f0000001000;
constexpr uint32_t kSite = 7;

Ev graph_launch(uint64_t exec) { return with_exec(call("cudaGraphLaunch").stream(kS), exec); }
Ev exec_destroy(uint64_t exec) { return with_exec(call("cudaGraphExecDestroy"), exec); }

// One kernel node: `grid` is its launch geometry, `arg` the address it holds as argument 0,
// `scalar` the hash of its other arguments.
struct Node {
  uint64_t grid = 1;
  uint64_t arg = kBuf;
  uint64_t scalar = 0x5ca1a;
  uint64_t topology = 0xabc;
};

// Capture at the site, instantiate (time: capture 10 us, instantiate 20 us later), walk.
void capture(Sim& sim, uint64_t exec, const Node& n, uint32_t site = kSite) {
  const uint64_t graph = kGraph + exec;
  Ev b = begin(kS).stack(site);
  b.e.time_ns = 1000 * sim.next_seq;
  sim(b)(launch(kS))(with_graph(end(kS), graph));
  Ev inst = with_exec(with_graph(call("cudaGraphInstantiate"), graph), exec).stack(8);
  inst.e.time_ns = b.e.time_ns + 30'000;
  sim(inst);
  trace::GraphNodeRecord node;
  node.exec = exec;
  node.type = trace::kNodeKernel;
  node.name = "_Z4bumpPi";
  const std::vector<trace::GraphRef> refs{{'a', 0, n.arg}};
  node.refs = refs;
  node.geometry[0] = n.grid;
  node.geometry[3] = 32;
  node.geometry_count = 7;
  node.has_scalars = true;
  node.scalar_hash = n.scalar;
  sim.replay.graph_node(node);
  sim.graph_watch->add_base(exec, n.arg);
  trace::GraphRecord g;
  g.exec = exec;
  g.nodes = 1;
  g.topology_hash = n.topology;
  sim.replay.graph(g);
}

const GraphSiteInfo* site_row(const Report& r, uint32_t stack) {
  for (const GraphSiteInfo& s : r.graph_sites)
    if (s.site.stack_id == stack) return &s;
  return nullptr;
}

bool says(const Finding& f, const std::string& text) {
  if (f.message.find(text) != std::string::npos) return true;
  MESSAGE(f.message);  // what it said instead
  return false;
}

}  // namespace

TEST_CASE("churn: the same graph captured, launched once and destroyed 30 times") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking));
  for (uint64_t i = 0; i < 30; ++i) {
    capture(sim, kExec + i, {});
    sim(graph_launch(kExec + i))(stream_sync(kS))(exec_destroy(kExec + i));
  }
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"graph-rebuilt-every-step"});
  const Finding& f = r.findings[0];
  CHECK(f.severity == Severity::Warning);
  CHECK(f.location.stack_id == kSite);  // at the capture site
  CHECK(says(f, "30 times; 29 times it replaced an exec launched 1.0 times"));
  CHECK(says(f, "nothing differed"));
  CHECK(says(f, "for 30 launches"));
  CHECK(says(f, "0.9 ms in all (30.0 us each)"));
  const GraphSiteInfo* row = site_row(r, kSite);
  REQUIRE(row != nullptr);
  CHECK(row->graphs == 30);
  CHECK(row->keys == 1);
  CHECK(row->alive_at_exit == 0);
  CHECK(row->launches == 30);
  CHECK(row->findings == std::vector<size_t>{0});
}

TEST_CASE("churn: what differed between consecutive captures") {
  SUBCASE("a static input moved") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    for (uint64_t i = 0; i < 12; ++i) {
      capture(sim, kExec + i, {.arg = kBuf + 0x1000 * i});
      sim(graph_launch(kExec + i))(exec_destroy(kExec + i));
    }
    const Report& r = sim.finish();
    REQUIRE(rules_of(r) == Rules{"graph-rebuilt-every-step"});
    CHECK(says(r.findings[0], "only addresses differed (argument 0 of bump(int*))"));
    CHECK(says(r.findings[0], "copy new data into its static inputs"));
  }
  SUBCASE("a scalar argument") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    for (uint64_t i = 0; i < 12; ++i) {
      capture(sim, kExec + i, {.scalar = i});
      sim(graph_launch(kExec + i))(exec_destroy(kExec + i));
    }
    const Report& r = sim.finish();
    REQUIRE(rules_of(r) == Rules{"graph-rebuilt-every-step"});
    CHECK(says(r.findings[0], "a scalar argument of bump(int*) differed in 11"));
    CHECK(says(r.findings[0], "cudaGraphExecUpdate"));
  }
}

TEST_CASE("churn: the old exec destroyed after the new capture, never launched again") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking));
  for (uint64_t i = 0; i < 12; ++i) {
    capture(sim, kExec + i, {});
    if (i > 0) sim(exec_destroy(kExec + i - 1));
    sim(graph_launch(kExec + i));
  }
  CHECK(rules_of(sim.finish()) == Rules{"graph-rebuilt-every-step"});
}

TEST_CASE("churn twins: no finding") {
  SUBCASE("each exec replayed 5 times") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    for (uint64_t i = 0; i < 12; ++i) {
      capture(sim, kExec + i, {});
      for (int k = 0; k < 5; ++k) sim(graph_launch(kExec + i));
      sim(exec_destroy(kExec + i));
    }
    const Report& r = sim.finish();
    CHECK(r.findings.empty());
    REQUIRE(site_row(r, kSite) != nullptr);
    CHECK(site_row(r, kSite)->launches_at_least);  // past the recorded first launches
  }
  SUBCASE("below the threshold: 10 captures, 9 re-captures") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    for (uint64_t i = 0; i < 10; ++i) {
      capture(sim, kExec + i, {});
      sim(graph_launch(kExec + i))(exec_destroy(kExec + i));
    }
    CHECK(sim.finish().findings.empty());
  }
  SUBCASE("kept alive in lists of 1, 3 and 10 graphs, each list dropped at once") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    uint64_t exec = kExec;
    for (int size : {1, 3, 10, 10, 10}) {
      const uint64_t first = exec;
      for (int i = 0; i < size; ++i, ++exec) {
        capture(sim, exec, {});
        sim(graph_launch(exec));
      }
      for (uint64_t e = first; e < exec; ++e) sim(exec_destroy(e));
    }
    CHECK(sim.finish().findings.empty());
  }
  SUBCASE("refreshed in place with cudaGraphExecUpdate") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    capture(sim, kExec, {});
    for (uint64_t i = 1; i < 30; ++i) {
      sim(begin(kS).stack(kSite))(launch(kS))(with_graph(end(kS), kGraph + 100 + i));
      sim(with_graph(with_exec(call("cudaGraphExecUpdate"), kExec), kGraph + 100 + i));
      sim(graph_launch(kExec));
    }
    const Report& r = sim.finish();
    CHECK(r.findings.empty());
    REQUIRE(site_row(r, kSite) != nullptr);
    CHECK(site_row(r, kSite)->graphs == 1);
    CHECK(site_row(r, kSite)->updates == 29);
  }
}

TEST_CASE("teardowns: every size destroyed together and captured again, 15 times") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking));
  uint64_t exec = kExec;
  for (int round = 0; round < 15; ++round) {
    const uint64_t first = exec;
    for (uint64_t size = 8; size > 0; --size, ++exec) capture(sim, exec, {.grid = size});
    sim(graph_launch(first))(graph_launch(first + 3));  // a few sizes served
    for (uint64_t e = first; e < exec; ++e) sim(exec_destroy(e));
  }
  const Report& r = sim.finish();
  CHECK(r.findings.empty());
  REQUIRE(site_row(r, kSite) != nullptr);
  CHECK(site_row(r, kSite)->graphs == 120);
  CHECK(site_row(r, kSite)->keys == 8);
  CHECK(site_row(r, kSite)->topologies == 1);
}

TEST_CASE("specialization growth: new sizes captured between replays") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking));
  for (uint64_t size = 1; size <= 12; ++size) {
    capture(sim, kExec + size, {.grid = size});
    for (uint64_t older = 1; older <= size; ++older) sim(graph_launch(kExec + older));
  }
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"graph-specialization-growth"});
  const Finding& f = r.findings[0];
  CHECK(f.location.stack_id == kSite);
  CHECK(says(f, "made 12 distinct graphs (1 topologies), 10 of them captured between replays"));
  CHECK(says(f, "launches of each of those: 4+, 4+"));
  REQUIRE(site_row(r, kSite) != nullptr);
  CHECK(site_row(r, kSite)->alive_at_exit == 12);
}

TEST_CASE("specialization growth twins: no finding") {
  SUBCASE("every size captured up front (a start-up burst), then served") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    for (uint64_t size = 51; size >= 1; --size) capture(sim, kExec + size, {.grid = size});
    for (uint64_t size = 1; size <= 51; size += 5) sim(graph_launch(kExec + size));
    CHECK(sim.finish().findings.empty());
  }
  SUBCASE("each capture checked by one replay of itself") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    for (uint64_t size = 1; size <= 20; ++size) {
      capture(sim, kExec + size, {.grid = size});
      sim(graph_launch(kExec + size));
    }
    CHECK(sim.finish().findings.empty());
  }
  SUBCASE("a mode switch: every size captured again in a richer mode, the old set dropped") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    for (uint64_t size = 1; size <= 20; ++size) capture(sim, kExec + size, {.grid = size});
    for (uint64_t size = 1; size <= 20; size += 3) sim(graph_launch(kExec + size));
    for (uint64_t size = 1; size <= 20; ++size)
      capture(sim, kExec + 100 + size, {.grid = size, .topology = 0xdef});
    for (uint64_t size = 1; size <= 20; ++size) sim(exec_destroy(kExec + size));
    for (uint64_t size = 1; size <= 20; size += 3) sim(graph_launch(kExec + 100 + size));
    const Report& r = sim.finish();
    CHECK(r.findings.empty());
    REQUIRE(site_row(r, kSite) != nullptr);
    CHECK(site_row(r, kSite)->keys == 40);
    CHECK(site_row(r, kSite)->topologies == 2);
    CHECK(site_row(r, kSite)->alive_at_exit == 20);
  }
}

TEST_CASE("lifecycle table: sites, graph memory, most graphs first") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking));
  capture(sim, kExec, {}, 21);
  sim(graph_launch(kExec));
  // A capture that allocates (PyTorch's private pool grows during the capture).
  Ev b = begin(kS).stack(22);
  sim(b)(launch(kS));
  Ev m = call("cudaMalloc");
  m.e.pointer = 0x7f0000100000;
  m.e.size = 1 << 20;
  m.e.set(Field::Pointer);
  m.e.set(Field::Size);
  sim(exchange_mode(CaptureMode::Relaxed))(m)(exchange_mode(CaptureMode::Global));
  sim(with_graph(end(kS), kGraph + 2));
  sim(with_exec(with_graph(call("cudaGraphInstantiate"), kGraph + 2), kExec + 2));
  capture(sim, kExec + 3, {.grid = 2}, 22);
  const Report& r = sim.finish();
  // (The allocation is the note PyTorch's built-in suppressions silence; no lifecycle finding.)
  CHECK(rules_of(r) == Rules{"relaxed-mode-unsafe-call"});
  REQUIRE(r.graph_sites.size() == 2);
  CHECK(r.graph_sites[0].site.stack_id == 22u);  // 2 graphs before 1
  CHECK(r.graph_sites[0].graphs == 2);
  CHECK(r.graph_sites[0].pool_bytes == (1u << 20));
  CHECK(r.graph_sites[0].alive_at_exit == 2);
  CHECK(r.graph_sites[1].site.stack_id == 21u);
  CHECK(r.graph_sites[1].launches == 1);
  CHECK(r.graph_sites[1].capture_ns == 30'000);
  CHECK(r.graph_sites[0].pid == 4242u);
}

TEST_CASE("framework patterns that are no churn and no growth") {
  SUBCASE("vLLM piecewise: per size, 16 identical layer pieces (one key), burst, some sizes served") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    uint64_t exec = kExec;
    for (uint64_t size = 10; size >= 1; --size)
      for (int layer = 0; layer < 16; ++layer, ++exec)  // the same kernels, other weights
        capture(sim, exec, {.grid = size, .arg = kBuf + 0x100 * static_cast<uint64_t>(layer)});
    for (int step = 0; step < 30; ++step)  // sizes 1 and 2 served: their pieces replay in order
      for (uint64_t e = exec - 32; e < exec; ++e) sim(graph_launch(e));
    const Report& r = sim.finish();
    CHECK(r.findings.empty());
    REQUIRE(site_row(r, kSite) != nullptr);
    CHECK(site_row(r, kSite)->graphs == 160);
    CHECK(site_row(r, kSite)->keys == 10);
  }
  SUBCASE("vLLM piecewise shut down piece by piece after serving") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    for (uint64_t layer = 0; layer < 16; ++layer) capture(sim, kExec + layer, {.arg = kBuf + layer});
    for (int step = 0; step < 5; ++step)
      for (uint64_t layer = 0; layer < 16; ++layer) sim(graph_launch(kExec + layer));
    for (uint64_t layer = 0; layer < 16; ++layer) sim(exec_destroy(kExec + layer));
    CHECK(sim.finish().findings.empty());
  }
  SUBCASE("RL engine, one size: sleep/wake every step, each generation replays 50 times") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    for (uint64_t gen = 0; gen < 40; ++gen) {
      capture(sim, kExec + gen, {});
      for (int k = 0; k < 50; ++k) sim(graph_launch(kExec + gen));
      sim(exec_destroy(kExec + gen));
    }
    CHECK(sim.finish().findings.empty());
  }
  SUBCASE("make_graphed_callables: forward and backward graphs of 4 modules, trained 100 steps") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    for (uint64_t m = 0; m < 8; ++m) capture(sim, kExec + m, {.grid = m + 1});
    for (int step = 0; step < 100; ++step)
      for (uint64_t m = 0; m < 8; ++m) sim(graph_launch(kExec + m));
    CHECK(sim.finish().findings.empty());
  }
}

TEST_CASE("churn of two graphs captured each step at one site (forward and backward)") {
  // Each step destroys the last step's pair and captures both again: interleaved keys, each
  // re-capture preceded by the other key's capture. Not churn by the rule's definition (another
  // key of the site was captured in between): the explanation's exemption, pinned here.
  Sim sim;
  sim(create_stream(kS, kNonBlocking));
  for (uint64_t step = 0; step < 20; ++step) {
    capture(sim, kExec + 2 * step, {.grid = 1});
    capture(sim, kExec + 2 * step + 1, {.grid = 2});
    sim(graph_launch(kExec + 2 * step))(graph_launch(kExec + 2 * step + 1));
    sim(exec_destroy(kExec + 2 * step))(exec_destroy(kExec + 2 * step + 1));
  }
  CHECK(sim.finish().findings.empty());
}

TEST_CASE("bounds: a site past its key bound says 'at least' and does not starve another site") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking));
  const uint64_t many = GraphLifecycle::kMaxKeysPerSite + 10;
  for (uint64_t size = 1; size <= many; ++size) {
    capture(sim, kExec + size, {.grid = size});
    sim(graph_launch(kExec + size))(graph_launch(kExec + size));
  }
  for (uint64_t i = 0; i < 12; ++i) {  // another site churns one graph
    capture(sim, 0x900000 + i, {}, 31);
    sim(graph_launch(0x900000 + i))(exec_destroy(0x900000 + i));
  }
  const Report& r = sim.finish();
  CHECK(rules_of(r) == Rules{"graph-rebuilt-every-step", "graph-specialization-growth"});
  for (const Finding& f : r.findings)
    if (f.rule == "graph-specialization-growth") CHECK(says(f, "made at least 4096 distinct graphs"));
}

// A benchmark's size sweep (nccl-tests -G): capture a graph for one size, replay it a
// few times, destroy it, next size. One specialization lives at a time: no growth.
TEST_CASE("a size sweep that destroys each size's graph before the next is no growth") {
  SUBCASE("each size replayed 5 times, then destroyed") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    for (uint64_t size = 1; size <= 24; ++size) {
      capture(sim, kExec + size, {.grid = size});
      for (int i = 0; i < 5; ++i) sim(graph_launch(kExec + size));
      sim(stream_sync(kS))(exec_destroy(kExec + size));
    }
    const Report& r = sim.finish();
    CHECK(r.findings.empty());
    REQUIRE(site_row(r, kSite) != nullptr);
    CHECK(site_row(r, kSite)->keys == 24);
    CHECK(site_row(r, kSite)->alive_at_exit == 0);
  }
  SUBCASE("the same sweep keeping every size alive is growth") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    for (uint64_t size = 1; size <= 24; ++size) {
      capture(sim, kExec + size, {.grid = size});
      for (int i = 0; i < 5; ++i) sim(graph_launch(kExec + size));
    }
    CHECK(rules_of(sim.finish()) == Rules{"graph-specialization-growth"});
  }
}

// A graph of no nodes re-captured every iteration (nccl-tests -G on a rank with nothing to
// enqueue): nothing to replay, nothing saved by keeping it; not a warning.
TEST_CASE("churn of a graph of no nodes is not reported") {
  auto empty_capture = [](Sim& sim, uint64_t exec) {
    const uint64_t graph = kGraph + exec;
    sim(begin(kS).stack(kSite))(with_graph(end(kS), graph));
    sim(with_exec(with_graph(call("cudaGraphInstantiate"), graph), exec).stack(8));
    trace::GraphRecord g;
    g.exec = exec;
    g.nodes = 0;
    g.topology_hash = 0x0;
    sim.replay.graph(g);
  };
  Sim sim;
  sim(create_stream(kS, kNonBlocking));
  for (uint64_t i = 0; i < 30; ++i) {
    empty_capture(sim, kExec + i);
    sim(graph_launch(kExec + i))(stream_sync(kS))(exec_destroy(kExec + i));
  }
  const Report& r = sim.finish();
  CHECK(r.findings.empty());
  REQUIRE(site_row(r, kSite) != nullptr);
  CHECK(site_row(r, kSite)->graphs == 30);  // still in the lifecycle table
  CHECK(site_row(r, kSite)->keys == 1);
}
