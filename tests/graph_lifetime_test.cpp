// The graph-lifetime model and its four rules, fed fabricated calls and graph
// records the way the trace reader would.
#include <doctest/doctest.h>

#include <optional>
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

Ev with_pointer(Ev ev, uint64_t pointer, uint64_t size = 0) {
  ev.e.pointer = pointer;
  ev.e.set(Field::Pointer);
  if (size != 0) {
    ev.e.size = size;
    ev.e.set(Field::Size);
  }
  return ev;
}
Ev alloc(uint64_t p, uint64_t size = 128) { return with_pointer(call("cudaMalloc"), p, size); }
Ev free_(uint64_t p) { return with_pointer(call("cudaFree"), p); }
Ev end_graph(uint64_t s, uint64_t graph = kGraph) { return with_graph(end(s), graph); }
Ev instantiate(uint64_t exec = kExec, uint64_t graph = kGraph) {
  return with_exec(with_graph(call("cudaGraphInstantiate"), graph), exec);
}
Ev graph_launch(uint64_t s, uint64_t exec = kExec) {
  return with_exec(call("cudaGraphLaunch").stream(s), exec);
}
Ev exec_destroy(uint64_t exec = kExec) { return with_exec(call("cudaGraphExecDestroy"), exec); }

// The walk the interposer writes after a successful instantiate: one kernel node holding `p`
// as argument 0.
void walk(Sim& sim, uint64_t exec, std::vector<trace::GraphRef> refs, uint64_t hash = 0xabc,
          uint32_t type = trace::kNodeKernel, const char* name = "_Z4bumpPi",
          bool complete = true) {
  trace::GraphNodeRecord node;
  node.exec = exec;
  node.type = type;
  node.name = name;
  node.refs = refs;
  sim.replay.graph_node(node);
  for (const trace::GraphRef& ref : refs) {
    sim.graph_watch->add_base(exec, ref.address);
    sim.held->add(exec, ref.address);
  }
  sim.held->publish(exec);
  trace::GraphRecord g;
  g.exec = exec;
  g.nodes = 1;
  g.topology_hash = hash;
  g.complete = complete;
  sim.replay.graph(g);
}

// Capture, instantiate and walk a graph whose kernel holds `p`.
void captured_graph(Sim& sim, uint64_t p, uint64_t exec = kExec) {
  sim(begin(kS).stack(7))(launch(kS))(end_graph(kS))(instantiate(exec));
  walk(sim, exec, {{'a', 0, p}});
}

}  // namespace

TEST_CASE("replay-after-free: a launch after the buffer a kernel node holds was freed") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(alloc(kBuf));
  captured_graph(sim, kBuf + 16);
  sim(graph_launch(kS))(stream_sync(kS))(free_(kBuf).stack(3));
  sim(graph_launch(kS).stack(5))(graph_launch(kS));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"replay-after-free"});
  const Finding& f = r.findings[0];
  CHECK(f.severity == Severity::Error);
  CHECK(f.api == "cudaGraphLaunch");
  CHECK(f.location.stack_id == 5u);
  CHECK(f.consequences == 1);
  CHECK(f.capture == 1u);
  CHECK(f.message.find("bump(int*)") != std::string::npos);
  CHECK(f.message.find("argument 0") != std::string::npos);
  CHECK(f.message.find("cudaFree") != std::string::npos);
  std::vector<std::string> roles;
  for (const Related& rel : f.related) roles.push_back(rel.role);
  CHECK(roles == std::vector<std::string>{"free", "allocation", "instantiate", "capture-begin"});
}

TEST_CASE("replay-after-free twin: the exec is destroyed before the free") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(alloc(kBuf));
  captured_graph(sim, kBuf);
  sim(graph_launch(kS))(stream_sync(kS))(exec_destroy())(free_(kBuf))(alloc(kBuf));
  CHECK(sim.finish().findings.empty());
}

TEST_CASE("replay-after-free: the freed address was handed to another allocation") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(alloc(kBuf));
  captured_graph(sim, kBuf);
  sim(free_(kBuf))(alloc(kBuf).stack(9))(graph_launch(kS));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"replay-after-free"});
  CHECK(r.findings[0].message.find("another allocation") != std::string::npos);
  CHECK(r.findings[0].related[2].role == "reallocation");
}

TEST_CASE("replay-after-free: pinned host memory a memcpy node reads, freed by cudaFreeHost") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(with_pointer(call("cudaMallocHost"), kBuf, 4096));
  sim(begin(kS))(memcpy_async(kS))(end_graph(kS))(instantiate());
  walk(sim, kExec, {{'s', 0, kBuf}}, 1, trace::kNodeMemcpy, "");
  sim(with_pointer(call("cudaFreeHost"), kBuf))(graph_launch(kS));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"replay-after-free"});
  CHECK(r.findings[0].message.find("pinned host memory") != std::string::npos);
  CHECK(r.findings[0].message.find("memcpy node (source)") != std::string::npos);
}

TEST_CASE("replay-after-free: a graph built by hand, and a VMM unmap of a range") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(with_pointer(call("cuMemMap"), kBuf, 1 << 20));
  sim(instantiate());  // no capture made this graph
  walk(sim, kExec, {{'a', 2, kBuf + 4096}});
  sim(with_pointer(call("cuMemUnmap"), kBuf, 1 << 20))(graph_launch(kS));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"replay-after-free"});
  CHECK_FALSE(r.findings[0].capture.has_value());
}

TEST_CASE("replay-after-free twin: stream-ordered allocations inside a capture are graph nodes") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(begin(kS));
  sim(with_pointer(call("cudaMallocAsync").stream(kS), kBuf, 128))(launch(kS));
  sim(with_pointer(call("cudaFreeAsync").stream(kS), kBuf))(end_graph(kS))(instantiate());
  walk(sim, kExec, {{'a', 0, kBuf}});
  sim(graph_launch(kS))(graph_launch(kS));
  CHECK(sim.finish().findings.empty());
}

TEST_CASE("replay-after-free twin: a successful update points the exec at new buffers") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(alloc(kBuf))(alloc(kBuf + 0x10000));
  captured_graph(sim, kBuf);
  sim(begin(kS))(launch(kS))(end_graph(kS, kGraph + 1));
  sim(with_graph(with_exec(call("cudaGraphExecUpdate"), kExec), kGraph + 1));
  walk(sim, kExec, {{'a', 0, kBuf + 0x10000}});
  sim(free_(kBuf))(graph_launch(kS));
  CHECK(sim.finish().findings.empty());
}

TEST_CASE("graph-replay-failed: a sticky error at the sync after a launch, cause folded in") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(alloc(kBuf));
  captured_graph(sim, kBuf);
  sim(graph_launch(kS))(stream_sync(kS))(free_(kBuf))(graph_launch(kS).stack(4));
  sim(stream_sync(kS).fails(700).stack(6))(device_sync().fails(700));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"replay-after-free", "graph-replay-failed"});
  const Finding& f = r.findings[1];
  CHECK(f.location.stack_id == 6u);
  CHECK(f.result_name == "cudaErrorIllegalAddress");
  CHECK(f.consequences == 1);
  CHECK(f.message.find("Likely cause") != std::string::npos);
  CHECK(f.message.find("graph exec #1") != std::string::npos);
}

TEST_CASE("graph-replay-failed: no free known, the graph in flight is named") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking));
  captured_graph(sim, kBuf);
  sim(graph_launch(kS))(stream_sync(kS))(graph_launch(kS))(stream_sync(kS).fails(719));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"graph-replay-failed"});
  CHECK(r.findings[0].message.find("Likely cause") == std::string::npos);
  CHECK(r.findings[0].message.find("in flight") != std::string::npos);
}

TEST_CASE("graph-replay-failed twin: the replay was synchronized before an eager kernel faulted") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking));
  captured_graph(sim, kBuf);
  sim(graph_launch(kS))(stream_sync(kS))(launch(kS))(stream_sync(kS).fails(700));
  CHECK(sim.finish().findings.empty());
}

TEST_CASE("graph-replay-failed twin: another stream's graph is not blamed for a stream sync") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
  captured_graph(sim, kBuf);
  sim(graph_launch(kS2))(stream_sync(kS).fails(700));
  CHECK(sim.finish().findings.empty());
}

TEST_CASE("graph-update-rejected: which node, what changed") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking));
  captured_graph(sim, kBuf);
  sim(begin(kS))(launch(kS))(end_graph(kS, kGraph + 1));
  sim(with_graph(with_exec(call("cudaGraphExecUpdate"), kExec), kGraph + 1).fails(910).stack(12));
  trace::GraphUpdateRecord u;
  u.seq = sim.next_seq - 1;
  u.exec = kExec;
  u.result = 3;
  u.error_type = trace::kNodeMemset;
  sim.replay.graph_update(u);
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"graph-update-rejected"});
  const Finding& f = r.findings[0];
  CHECK(f.location.stack_id == 12u);
  CHECK(f.result_name == "cudaErrorGraphExecUpdateFailure");
  CHECK(f.message.find("node's type changed") != std::string::npos);
  CHECK(f.message.find("memset node") != std::string::npos);
}

TEST_CASE("graph-update-rejected: without the details record, still reported at the end") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking));
  captured_graph(sim, kBuf);
  sim(with_exec(call("cuGraphExecUpdate_v2"), kExec).fails(910));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"graph-update-rejected"});
  CHECK(r.findings[0].message.find("details not recorded") != std::string::npos);
}

TEST_CASE("graph lifetime: bad input does not crash or invent findings") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(alloc(kBuf));
  // Node records of an exec nobody instantiated, a gap in node indexes, a walk that never
  // finished (the trace ends mid-graph), a launch of an unknown exec, a free of unknown memory.
  trace::GraphNodeRecord stray;
  stray.exec = 0xdead;
  sim.replay.graph_node(stray);
  sim(begin(kS))(launch(kS))(end_graph(kS))(instantiate());
  trace::GraphNodeRecord gap;
  gap.exec = kExec;
  gap.index = 5;
  sim.replay.graph_node(gap);
  sim(graph_launch(kS, 0xbeef))(free_(0x1234))(exec_destroy(0x4321))(free_(kBuf))(graph_launch(kS));
  CHECK(sim.finish().findings.empty());
}

TEST_CASE("graph-replay-failed: an exec past its recorded launches may have been running") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
  captured_graph(sim, kBuf);
  for (uint32_t i = 0; i < trace::kRecordedFirstLaunches; ++i) sim(graph_launch(kS));
  sim(stream_sync(kS));  // later launches are not recorded: the fault may be the graph's
  sim(stream_sync(kS).fails(700));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"graph-replay-failed"});
  CHECK(r.findings[0].message.find("may have been running") != std::string::npos);
}

TEST_CASE("graph-replay-failed twin: a saturated exec replayed on another stream is not blamed") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(create_stream(kS2, kNonBlocking));
  captured_graph(sim, kBuf);
  for (uint32_t i = 0; i < trace::kRecordedFirstLaunches; ++i) sim(graph_launch(kS2));
  sim(stream_sync(kS2))(stream_sync(kS).fails(700));
  CHECK(sim.finish().findings.empty());
}

namespace {

// cudaGraphExecKernelNodeSetParams on the walk's node `index` (none: the interposer did not find
// the node among the walked ones).
Ev set_params(std::optional<uint32_t> index, uint64_t exec = kExec) {
  Ev ev = with_exec(call("cudaGraphExecKernelNodeSetParams"), exec);
  if (index) {
    ev.e.node_index = *index;
    ev.e.set(Field::NodeIndex);
  }
  return ev;
}

// A walked exec of two kernel nodes: node 0 holds `first`, node 1 holds `second`.
void two_kernels(Sim& sim, uint64_t first, uint64_t second) {
  sim(begin(kS).stack(7))(launch(kS))(launch(kS))(end_graph(kS))(instantiate());
  for (uint32_t i = 0; i < 2; ++i) {
    const std::vector<trace::GraphRef> refs{{'a', 0, i == 0 ? first : second}};
    trace::GraphNodeRecord node;
    node.exec = kExec;
    node.index = i;
    node.type = trace::kNodeKernel;
    node.name = "_Z4bumpPi";
    node.refs = refs;
    sim.replay.graph_node(node);
    sim.graph_watch->add_base(kExec, refs[0].address);
  }
  trace::GraphRecord g;
  g.exec = kExec;
  g.nodes = 2;
  sim.replay.graph(g);
}

}  // namespace

TEST_CASE("replay-after-free twin: SetParams re-points the node before its old buffer is freed") {
  for (const bool free_first : {false, true}) {
    INFO("free before SetParams: " << free_first);
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(alloc(kBuf))(alloc(kBuf + 0x10000));
    captured_graph(sim, kBuf);
    if (free_first) sim(free_(kBuf));
    sim(set_params(0));
    if (!free_first) sim(free_(kBuf));
    sim(graph_launch(kS));
    CHECK(sim.finish().findings.empty());
  }
}

TEST_CASE("replay-after-free: SetParams re-pointed another node; the freed buffer is still held") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(alloc(kBuf))(alloc(kBuf + 0x10000));
  two_kernels(sim, kBuf, kBuf + 0x10000);
  sim(set_params(1))(free_(kBuf))(graph_launch(kS).stack(5));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"replay-after-free"});
  CHECK(r.findings[0].location.stack_id == 5u);
}

TEST_CASE("replay-after-free twin: SetParams on a node the interposer did not find forgets all") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(alloc(kBuf))(alloc(kBuf + 0x10000));
  two_kernels(sim, kBuf, kBuf + 0x10000);
  sim(set_params(std::nullopt))(free_(kBuf))(free_(kBuf + 0x10000))(graph_launch(kS));
  CHECK(sim.finish().findings.empty());
}

// PyTorch's caching allocator (trace/framework_memory.def): blocks inside one cudaMalloc'd
// segment, given back and handed out without any CUDA call.
namespace {
constexpr uint64_t kSegment = 0x7f7244000000;
Ev torch_free(uint64_t p, uint64_t size) {
  return with_pointer(call("torch.CUDACachingAllocator.free"), p, size);
}
Ev torch_alloc(uint64_t p, uint64_t size) {
  return with_pointer(call("torch.CUDACachingAllocator.alloc"), p, size);
}
}  // namespace

TEST_CASE("replay-after-free: a tensor's block given back to PyTorch's allocator and reused") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(alloc(kSegment, 20 << 20));
  captured_graph(sim, kSegment + 0x800000);
  sim(graph_launch(kS))(stream_sync(kS));
  sim(torch_free(kSegment + 0x800000, 4 << 20).stack(3));
  sim(torch_alloc(kSegment + 0x800000, 4 << 20).stack(4));
  sim(graph_launch(kS).stack(5))(graph_launch(kS));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"replay-after-free"});
  const Finding& f = r.findings[0];
  CHECK(f.location.stack_id == 5u);
  CHECK(f.consequences == 1);
  CHECK(f.message.find("PyTorch's CUDA caching allocator (4194304 bytes at 0x7f7244800000)") !=
        std::string::npos);
  CHECK(f.message.find("no cudaFree") != std::string::npos);
  CHECK(f.message.find("handed to another tensor") != std::string::npos);
  std::vector<std::string> roles;
  for (const Related& rel : f.related) roles.push_back(rel.role);
  CHECK(roles == std::vector<std::string>{"free", "reallocation", "instantiate", "capture-begin"});
  CHECK(f.related[0].location.stack_id == 3u);
  CHECK(f.related[1].location.stack_id == 4u);
}

TEST_CASE("replay-after-free: given back to the allocator, not yet reused, still a finding") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(alloc(kSegment, 20 << 20));
  captured_graph(sim, kSegment + 0x100);
  sim(torch_free(kSegment, 4096))(graph_launch(kS));
  const Report& r = sim.finish();
  REQUIRE(rules_of(r) == Rules{"replay-after-free"});
  CHECK(r.findings[0].message.find("may hand to any tensor") != std::string::npos);
}

TEST_CASE("replay-after-free twins: PyTorch's allocator and memory the graph does not hold") {
  SUBCASE("another tensor of the same segment comes and goes") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(alloc(kSegment, 20 << 20));
    captured_graph(sim, kSegment + 0x800000);
    sim(torch_free(kSegment, 0x800000))(torch_alloc(kSegment, 0x800000))(graph_launch(kS));
    CHECK(sim.finish().findings.empty());
  }
  SUBCASE("the block is given back after the last replay, the exec destroyed later") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(alloc(kSegment, 20 << 20));
    captured_graph(sim, kSegment);
    sim(graph_launch(kS))(stream_sync(kS))(torch_free(kSegment, 4096))(exec_destroy());
    CHECK(sim.finish().findings.empty());
  }
  SUBCASE("the exec is destroyed before the free, and the block reused") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(alloc(kSegment, 20 << 20));
    captured_graph(sim, kSegment);
    sim(exec_destroy())(torch_free(kSegment, 4096))(torch_alloc(kSegment, 4096));
    sim(graph_launch(kS));
    CHECK(sim.finish().findings.empty());
  }
  SUBCASE("the CUDA allocation the block lies in stays live: cudaMalloc's block is untouched") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(alloc(kSegment, 20 << 20));
    captured_graph(sim, kSegment + 0x100);
    sim(torch_free(kSegment, 4096))(exec_destroy());
    captured_graph(sim, kSegment + 0x100, kExec + 1);
    sim(graph_launch(kS, kExec + 1))(free_(kSegment).stack(8));
    sim(graph_launch(kS, kExec + 1));
    const Report& r = sim.finish();
    REQUIRE(rules_of(r) == Rules{"replay-after-free"});
    CHECK(r.findings[0].message.find("cudaFree") != std::string::npos);  // CUDA's own words
    CHECK(r.findings[0].message.find("caching allocator") == std::string::npos);
  }
}
