// The lifecycle table's held memory (model/graph_held_memory.h): what the execs alive at exit
// hold, by owner, from fabricated calls and graph walks; its owners named from the allocations'
// stacks (model/framework_calls.def, Owner rows) and its text, JSON and HTML.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "model/framework_calls.h"
#include "report/lifecycle_table.h"
#include "report/render.h"
#include "tests/event_builder.h"
#include "trace/graph_record.h"

using namespace capguard;
using namespace capguard::testing;

namespace {

constexpr uint64_t kExec = 0x7701;
constexpr uint64_t kGraph = 0x6701;
constexpr uint64_t kBuf = 0x7f0000001000;      // the program's own cudaMalloc
constexpr uint64_t kSegment = 0x7f7244000000;  // a segment of PyTorch's caching allocator
constexpr uint64_t kNowhere = 0x7e0000000000;  // in no allocation the trace shows
constexpr uint32_t kSite = 7;

Ev with_pointer(Ev ev, uint64_t pointer, uint64_t size) {
  ev.e.pointer = pointer;
  ev.e.set(Field::Pointer);
  ev.e.size = size;
  ev.e.set(Field::Size);
  return ev;
}
Ev alloc(uint64_t p, uint64_t size) { return with_pointer(call("cudaMalloc"), p, size); }
Ev torch_free(uint64_t p, uint64_t size) {
  return with_pointer(call("torch.CUDACachingAllocator.free"), p, size);
}

// Captures at kSite (with `during` called while the capture is open), instantiates and walks a
// graph of one kernel node per address.
template <class During>
void graph_holding(Sim& sim, const std::vector<uint64_t>& addresses, During during,
                   uint64_t exec = kExec) {
  sim(begin(kS, CaptureMode::Relaxed).stack(kSite))(launch(kS));
  during();
  sim(with_graph(end(kS), kGraph + exec));
  sim(with_exec(with_graph(call("cudaGraphInstantiate"), kGraph + exec), exec));
  for (uint32_t i = 0; i < addresses.size(); ++i) {
    const std::vector<trace::GraphRef> refs{{'a', 0, addresses[i]}};
    trace::GraphNodeRecord node;
    node.exec = exec;
    node.index = i;
    node.type = trace::kNodeKernel;
    node.name = "_Z4bumpPi";
    node.refs = refs;
    sim.replay.graph_node(node);
    sim.graph_watch->add_base(exec, addresses[i]);
    sim.held->add(exec, addresses[i]);
  }
  sim.held->publish(exec);
  trace::GraphRecord g;
  g.exec = exec;
  g.nodes = static_cast<uint32_t>(addresses.size());
  sim.replay.graph(g);
}
void graph_holding(Sim& sim, const std::vector<uint64_t>& addresses) {
  graph_holding(sim, addresses, [] {});
}

Frame native(std::string function, std::string module, std::string file = {}, int line = 0) {
  Frame f;
  f.function = std::move(function);
  f.module = std::move(module);
  f.file = std::move(file);
  f.line = line;
  return f;
}

// What symbolization gives an allocation's stack: CUDA's frame, then the caller's.
void symbolized(HeldMemory& row, std::vector<Frame> callers) {
  row.alloc.frames = {native("cudaMalloc", "/usr/local/cuda/lib64/libcudart.so.13")};
  for (Frame& f : callers) row.alloc.frames.push_back(std::move(f));
  row.alloc.user_frame =
      row.alloc.frames.back().file.empty() ? -1 : static_cast<int>(row.alloc.frames.size() - 1);
}

const std::string kC10 = "/venv/lib/python3.12/site-packages/torch/lib/libc10_cuda.so";

}  // namespace

TEST_CASE("held memory: the program's cudaMalloc, a PyTorch block given back, an unknown address") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(alloc(kBuf, 4096).stack(20));
  sim(alloc(kSegment, 20 << 20).stack(21));
  graph_holding(sim, {kBuf + 0x10, kBuf + 0x80, kSegment + 0x800000, kNowhere});
  sim(with_exec(call("cudaGraphLaunch").stream(kS), kExec))(stream_sync(kS));
  sim(torch_free(kSegment + 0x800000, 4 << 20).stack(3));  // the user's `del`
  sim.finish();
  Report& r = sim.report;
  REQUIRE(r.graph_sites.size() == 1);
  std::vector<HeldMemory>& held = r.graph_sites[0].held;
  REQUIRE(held.size() == 3);
  // Most bytes first: the block PyTorch's events named (its own size, not the segment's).
  CHECK(held[0].event_owner == "PyTorch's CUDA caching allocator");
  CHECK(held[0].bytes == 4u << 20);
  CHECK(held[0].blocks == 1);
  CHECK(held[0].addresses == 1);
  CHECK(held[0].released == 1);
  CHECK(held[1].api == "cudaMalloc");
  CHECK(held[1].alloc.stack_id == 20u);
  CHECK(held[1].bytes == 4096);
  CHECK(held[1].blocks == 1);
  CHECK(held[1].addresses == 2);
  CHECK(held[1].released == 0);
  CHECK_FALSE(held[2].alloc_known);  // the address in no allocation: last
  CHECK(held[2].addresses == 1);
  CHECK(held[2].bytes == 0);

  symbolized(held[1], {native("main", "/work/app", "/work/app.cu", 20)});
  name_framework_calls(r);  // names the held memory's owners too
  REQUIRE(held.size() == 3);
  CHECK(held[0].owner == "PyTorch's CUDA caching allocator");
  CHECK(held[0].pool == "default pool");
  CHECK(held[1].owner == "cudaMalloc");
  CHECK(held[1].pool.empty());
  CHECK(held[2].owner == "unknown");
  const std::string text = lifecycle_text(r);
  CHECK(text.find("held at exit: 4.0 MiB in 1 block, 1 address (1 released): PyTorch's CUDA "
                  "caching allocator, default pool\n") != std::string::npos);
  CHECK(text.find("held at exit: 4.0 KiB in 1 block, 2 addresses: cudaMalloc at app.cu:20 "
                  "(main)\n") != std::string::npos);
  CHECK(text.find("held at exit: 1 address: unknown\n") != std::string::npos);
  for (size_t at = 0, end = 0; at < text.size(); at = end + 1) {
    end = text.find('\n', at);
    CHECK(text_width(text.substr(at, end - at)) <= 120);
  }
  const std::string json = render_json(r);
  CHECK(json.find(R"("held_memory": [)") != std::string::npos);
  const size_t owner = json.find(R"("owner": "PyTorch's CUDA caching allocator")");
  REQUIRE(owner != std::string::npos);
  for (const char* field : {R"("pool": "default pool")", R"("bytes": 4194304)", R"("released": 1)",
                            R"("allocation": null)"})
    CHECK(json.find(field, owner) < json.find(R"("owner": "cudaMalloc")"));
  CHECK(render_html(r, RenderOptions{}).find("<br>4.0 KiB in 1 block, 2 addresses: cudaMalloc") !=
        std::string::npos);
}

TEST_CASE("held memory: PyTorch's segments by pool, the program's rows by user line") {
  Sim sim;
  sim(create_stream(kS, kNonBlocking))(alloc(kSegment, 2 << 20).stack(30));
  sim(alloc(kBuf, 4096).stack(40))(alloc(kBuf + 0x10000, 4096).stack(41));
  // The graph's private pool: a segment the capturing thread allocated while capturing.
  graph_holding(sim,
                {kSegment + 0x100, kSegment + 0x200, kSegment + 0x40000000, kBuf, kBuf + 0x10000},
                [&] { sim(alloc(kSegment + 0x40000000, 2 << 20).stack(31)); });
  sim.finish();
  Report& r = sim.report;
  REQUIRE(r.graph_sites.size() == 1);
  std::vector<HeldMemory>& held = r.graph_sites[0].held;
  REQUIRE(held.size() == 4);  // two segments (stacks 30, 31), two buffers (stacks 40, 41)
  for (HeldMemory& row : held) {
    if (row.alloc.stack_id == 30 || row.alloc.stack_id == 31) {
      CHECK(row.in_capture == (row.alloc.stack_id == 31));
      symbolized(row, {native("", kC10), native("forward", "", "/work/model.py", 9)});
    } else {
      // Two cudaMalloc calls of one user line (a helper called twice): one row.
      symbolized(row, {native("make_buffer", "/work/app", "/work/app.cu", 12)});
    }
  }
  name_held_memory(r);
  REQUIRE(held.size() == 3);
  CHECK(held[0].owner == "PyTorch's CUDA caching allocator");
  CHECK(held[0].bytes == 2u << 20);
  CHECK(held[0].addresses == 2);        // two tensors of one segment
  CHECK(held[0].alloc.frames.empty());  // a segment's line says nothing of the tensors in it
  CHECK(held[1].owner == held[0].owner);
  CHECK(held[1].addresses == 1);
  CHECK(std::set<std::string>{held[0].pool, held[1].pool} ==
        std::set<std::string>{"default pool", "a graph's private pool"});
  CHECK(held[2].owner == "cudaMalloc");
  CHECK(held[2].blocks == 2);
  CHECK(held[2].bytes == 8192);
  CHECK(held[2].addresses == 2);
  CHECK(site_cell(held[2].alloc) == "app.cu:12 (make_buffer)");
}

TEST_CASE("held memory: only execs alive at exit, one row past the bound, a workspace named") {
  SUBCASE("an exec destroyed before exit holds nothing") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking))(alloc(kBuf, 4096));
    graph_holding(sim, {kBuf});
    sim(with_exec(call("cudaGraphExecDestroy"), kExec));
    CHECK(sim.finish().graph_sites.at(0).held.empty());
  }
  SUBCASE("allocations from ever new stacks: bounded rows, the rest summed") {
    Sim sim;
    sim(create_stream(kS, kNonBlocking));
    std::vector<uint64_t> addresses;
    for (uint32_t i = 0; i < 100; ++i) {
      sim(alloc(kBuf + i * 0x1000, 0x1000).stack(100 + i));
      addresses.push_back(kBuf + i * 0x1000 + 8);
    }
    graph_holding(sim, addresses);
    const Report& r = sim.finish();
    const std::vector<HeldMemory>& held = r.graph_sites.at(0).held;
    REQUIRE(held.size() == kMaxHeldRowsPerSite + 1);
    CHECK(held.back().other_rows);
    CHECK(held.back().addresses == 100 - kMaxHeldRowsPerSite);
    uint64_t bytes = 0;
    for (const HeldMemory& row : held) bytes += row.bytes;
    CHECK(bytes == 100 * 0x1000);
  }
  SUBCASE("a cuBLAS workspace PyTorch's allocator gave, named before the allocator") {
    HeldMemory row;
    row.alloc_known = true;
    row.api = "cudaMalloc";
    symbolized(row, {native("c10::cuda::CUDACachingAllocator::Native::malloc", kC10),
                     native("at::cuda::getNewWorkspace()", "/t/libtorch_cuda.so")});
    REQUIRE(memory_owner_of(row.alloc) != nullptr);
    CHECK(memory_owner_of(row.alloc)->words == "a cuBLAS workspace of PyTorch's caching allocator");
    Report r;
    r.graph_sites.emplace_back().held.push_back(row);
    name_held_memory(r);
    CHECK(r.graph_sites[0].held[0].pool == "default pool");
  }
}
