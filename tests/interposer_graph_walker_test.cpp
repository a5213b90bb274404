// The graph walk at instantiate (graph_walker.*) over a fake driver, and the launch/sync watch
// (graph_watch.*): what is written, what stays bounded, which launches are worth a callback.
#include <cstdlib>
#include <cuda.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "interposer/graph_walker.h"
#include "interposer/graph_watch.h"
#include "interposer/kernel_launches.h"
#include "tests/trace_recording_sink.h"
#include "trace/reader.h"
#include "trace/writer.h"

namespace capguard::interposer {
namespace {

using trace::testing::TempDir;

// A fake graph: nodes by handle (1-based ints), a child graph, two live allocations.
struct FakeNode {
  int type = CU_GRAPH_NODE_TYPE_KERNEL;
  std::vector<uint64_t> args;  // 8-byte arguments
  uint64_t copy_src = 0, copy_dst = 0, set_dst = 0;
  void* child = nullptr;
  unsigned grid = 1;  // a kernel's gridDimX; a copy's and a memset's width
  size_t struct_at = ~size_t{0};  // this parameter is a 16-byte struct (args[i], args[i + 1])
};
struct FakeGraph {
  std::vector<void*> nodes;
};
std::map<void*, FakeNode> g_nodes;
std::map<void*, FakeGraph> g_graphs;
std::vector<uint64_t> g_arg_storage[64];
void* g_arg_pointers[64][16];
constexpr uint64_t kBlockA = 0x7f0000000000, kBlockB = 0x7f0000100000, kSize = 0x1000;

void* handle(uintptr_t n) { return reinterpret_cast<void*>(n); }

int get_nodes(void* graph, void** nodes, size_t* count) {
  const FakeGraph& g = g_graphs[graph];
  if (nodes != nullptr) {
    for (size_t i = 0; i < *count && i < g.nodes.size(); ++i) nodes[i] = g.nodes[i];
  }
  *count = g.nodes.size();
  return 0;
}
int get_edges(void*, void**, void**, void*, size_t* count) {
  *count = 1;
  return 0;
}
int node_type(void* node, int* type) {
  *type = g_nodes[node].type;
  return 0;
}
int kernel_params(void* node, void* out) {
  auto* p = static_cast<CUDA_KERNEL_NODE_PARAMS*>(out);
  const auto index = reinterpret_cast<uintptr_t>(node) % 64;
  g_arg_storage[index] = g_nodes[node].args;
  for (size_t i = 0; i < g_arg_storage[index].size(); ++i)
    g_arg_pointers[index][i] = &g_arg_storage[index][i];
  p->func = reinterpret_cast<CUfunction>(node);  // the node stands for its function
  p->gridDimX = g_nodes[node].grid;
  p->gridDimY = p->gridDimZ = 1;
  p->blockDimX = 32;
  p->blockDimY = p->blockDimZ = 1;
  p->sharedMemBytes = 48;
  p->kernelParams = g_arg_pointers[index];
  return 0;
}
int func_param_info(void* func, size_t index, size_t* offset, size_t* size) {
  if (index >= g_nodes[func].args.size() || index > g_nodes[func].struct_at)
    return CUDA_ERROR_INVALID_VALUE;  // past the last parameter (a struct takes two words)
  *offset = index * 8;
  *size = index == 1 ? 4 : 8;  // argument 1 is an int: never an address
  if (index == g_nodes[func].struct_at) *size = 16;
  return 0;
}
int func_name(const char** name, void*) {
  *name = "_Z4bumpPi";
  return 0;
}
int memcpy_params(void* node, void* out) {
  auto* p = static_cast<CUDA_MEMCPY3D*>(out);
  p->srcMemoryType = CU_MEMORYTYPE_HOST;
  p->srcHost = reinterpret_cast<const void*>(g_nodes[node].copy_src);
  p->dstMemoryType = CU_MEMORYTYPE_DEVICE;
  p->dstDevice = g_nodes[node].copy_dst;
  p->WidthInBytes = g_nodes[node].grid;
  p->Height = p->Depth = 1;
  return 0;
}
int memset_params(void* node, void* out) {
  auto* p = static_cast<CUDA_MEMSET_NODE_PARAMS*>(out);
  p->dst = g_nodes[node].set_dst;
  p->width = g_nodes[node].grid;
  p->height = 1;
  p->elementSize = 4;
  return 0;
}
int child_graph(void* node, void** graph) {
  *graph = g_nodes[node].child;
  return 0;
}
int address_range(uint64_t* base, size_t* size, uint64_t address) {
  for (uint64_t b : {kBlockA, kBlockB}) {
    if (address >= b && address < b + kSize) {
      *base = b;
      *size = kSize;
      return 0;
    }
  }
  return CUDA_ERROR_NOT_FOUND;
}

GraphDriver fake_driver() {
  GraphDriver d;
  d.get_nodes = &get_nodes;
  d.get_edges = &get_edges;
  d.node_type = &node_type;
  d.kernel_params = &kernel_params;
  d.func_param_info = &func_param_info;
  d.func_name = &func_name;
  d.memcpy_params = &memcpy_params;
  d.memset_params = &memset_params;
  d.child_graph = &child_graph;
  d.address_range = &address_range;
  return d;
}

struct GraphSink : trace::TraceSink {
  std::vector<trace::GraphNodeRecord> nodes;
  std::vector<std::vector<trace::GraphRef>> refs;
  std::vector<std::string> names;
  std::vector<trace::GraphRecord> graphs;
  void on_graph_node(const trace::GraphNodeRecord& r) override {
    nodes.push_back(r);
    refs.emplace_back(r.refs.begin(), r.refs.end());
    names.emplace_back(r.name);
  }
  void on_graph(const trace::GraphRecord& r) override { graphs.push_back(r); }
};

GraphSink walk_and_read(const GraphDriver& driver, void* graph, std::vector<uint64_t>& bases,
                        const WalkLimits& limits = WalkLimits{}) {
  TempDir dir;
  trace::TraceWriter writer;
  REQUIRE(writer.open(dir.path().c_str(), 1, 1, 0));
  walk_graph(
      driver, writer, 0xe1, reinterpret_cast<uint64_t>(graph),
      [](void* context, uint64_t base, uint64_t, uint64_t) {
        if (base != 0) static_cast<std::vector<uint64_t>*>(context)->push_back(base);
      },
      &bases, limits);
  GraphSink sink;
  const auto error = trace::read_trace(writer.path(), sink);
  REQUIRE_MESSAGE(!error, error->to_string());
  return sink;
}

TEST_CASE("graph walk: kernel arguments in live allocations, copies, memsets, child graphs") {
  g_nodes.clear();
  g_graphs.clear();
  g_nodes[handle(1)] = {CU_GRAPH_NODE_TYPE_KERNEL, {kBlockA + 8, 7, 0x1234, kBlockB}};
  g_nodes[handle(2)] = {CU_GRAPH_NODE_TYPE_MEMCPY, {}, kBlockB + 16, kBlockA};
  g_nodes[handle(3)] = {CU_GRAPH_NODE_TYPE_MEMSET, {}, 0, 0, kBlockA};
  g_nodes[handle(4)] = {CU_GRAPH_NODE_TYPE_GRAPH, {}, 0, 0, 0, handle(100)};
  g_nodes[handle(5)] = {CU_GRAPH_NODE_TYPE_HOST, {}};
  g_nodes[handle(6)] = {CU_GRAPH_NODE_TYPE_KERNEL, {kBlockB + 32}};
  g_graphs[handle(99)] = {{handle(1), handle(2), handle(3), handle(4), handle(5)}};
  g_graphs[handle(100)] = {{handle(6)}};
  std::vector<uint64_t> bases;
  const GraphSink sink = walk_and_read(fake_driver(), handle(99), bases);

  REQUIRE(sink.nodes.size() == 6);  // five nodes, one of them a child graph holding a sixth
  CHECK(sink.names[0] == "_Z4bumpPi");
  // Argument 1 is 4 bytes, argument 2 lies in no allocation: neither is an address.
  CHECK(sink.refs[0] == std::vector<trace::GraphRef>{{'a', 0, kBlockA + 8}, {'a', 3, kBlockB}});
  CHECK(sink.refs[1] == std::vector<trace::GraphRef>{{'s', 0, kBlockB + 16}, {'d', 0, kBlockA}});
  CHECK(sink.refs[2] == std::vector<trace::GraphRef>{{'d', 0, kBlockA}});
  CHECK(sink.nodes[4].depth == 1u);  // walk order: the child graph right after its node
  CHECK(sink.refs[4] == std::vector<trace::GraphRef>{{'a', 0, kBlockB + 32}});
  REQUIRE(sink.graphs.size() == 1);
  CHECK(sink.graphs[0].nodes == 6u);
  CHECK(sink.graphs[0].edges == 2u);
  CHECK(sink.graphs[0].complete);
  CHECK(std::count(bases.begin(), bases.end(), kBlockA) >= 1);

  // The same topology hashes the same; another topology does not.
  std::vector<uint64_t> ignored;
  CHECK(walk_and_read(fake_driver(), handle(99), ignored).graphs[0].topology_hash ==
        sink.graphs[0].topology_hash);
  CHECK(walk_and_read(fake_driver(), handle(100), ignored).graphs[0].topology_hash !=
        sink.graphs[0].topology_hash);
}

TEST_CASE("graph walk: each node's geometry and the hash of its non-address arguments (v4)") {
  g_nodes.clear();
  g_graphs.clear();
  const auto walk = [](FakeNode kernel) {
    g_nodes[handle(1)] = kernel;
    g_nodes[handle(2)] = {CU_GRAPH_NODE_TYPE_MEMCPY, {}, kBlockB, kBlockA, 0, nullptr, 256};
    g_nodes[handle(3)] = {CU_GRAPH_NODE_TYPE_MEMSET, {}, 0, 0, kBlockA, nullptr, 64};
    g_nodes[handle(4)] = {CU_GRAPH_NODE_TYPE_EMPTY, {}};
    g_graphs[handle(99)] = {{handle(1), handle(2), handle(3), handle(4)}};
    std::vector<uint64_t> ignored;
    return walk_and_read(fake_driver(), handle(99), ignored);
  };
  const GraphSink base = walk({CU_GRAPH_NODE_TYPE_KERNEL, {kBlockA, 7}, 0, 0, 0, nullptr, 12});
  REQUIRE(base.nodes.size() == 4);
  const trace::GraphNodeRecord& kernel = base.nodes[0];
  REQUIRE(kernel.geometry_count == 7u);
  CHECK(std::vector<uint64_t>(kernel.geometry, kernel.geometry + 7) ==
        std::vector<uint64_t>{12, 1, 1, 32, 1, 1, 48});
  CHECK(kernel.has_scalars);
  REQUIRE(base.nodes[1].geometry_count == 3u);  // memcpy: width, height, depth
  CHECK(base.nodes[1].geometry[0] == 256u);
  REQUIRE(base.nodes[2].geometry_count == 3u);  // memset: width, height, element size
  CHECK(base.nodes[2].geometry[0] == 64u);
  CHECK(base.nodes[2].geometry[2] == 4u);
  CHECK(base.nodes[3].geometry_count == 0u);
  CHECK_FALSE(base.nodes[3].has_scalars);

  // Another address for argument 0: the same scalars. Another int for argument 1: not.
  const GraphSink moved = walk({CU_GRAPH_NODE_TYPE_KERNEL, {kBlockA + 8, 7}, 0, 0, 0, nullptr, 12});
  CHECK(moved.nodes[0].scalar_hash == kernel.scalar_hash);
  const GraphSink scalar = walk({CU_GRAPH_NODE_TYPE_KERNEL, {kBlockA, 8}, 0, 0, 0, nullptr, 12});
  CHECK(scalar.nodes[0].scalar_hash != kernel.scalar_hash);
  // Another grid: the same topology (the analyzer's key adds the geometry).
  const GraphSink wider = walk({CU_GRAPH_NODE_TYPE_KERNEL, {kBlockA, 7}, 0, 0, 0, nullptr, 24});
  CHECK(wider.nodes[0].geometry[0] == 24u);
  CHECK(wider.graphs[0].topology_hash == base.graphs[0].topology_hash);
}

TEST_CASE("graph walk: pointers inside a struct argument are addresses, the rest not hashed") {
  g_nodes.clear();
  g_graphs.clear();
  const auto walk = [](uint64_t pointer, uint64_t count) {
    FakeNode kernel{CU_GRAPH_NODE_TYPE_KERNEL, {kBlockA, 7, pointer, count}};
    kernel.struct_at = 2;  // { char* data; int64_t count; }, as PyTorch passes data pointers
    g_nodes[handle(1)] = kernel;
    g_graphs[handle(99)] = {{handle(1)}};
    std::vector<uint64_t> ignored;
    return walk_and_read(fake_driver(), handle(99), ignored);
  };
  const GraphSink base = walk(kBlockB + 64, 1000);
  REQUIRE(base.nodes.size() == 1);
  CHECK(base.refs[0] == std::vector<trace::GraphRef>{{'a', 0, kBlockA}, {'a', 2, kBlockB + 64}});
  CHECK(walk(kBlockB + 128, 1000).nodes[0].scalar_hash == base.nodes[0].scalar_hash);
  // A struct's other bytes are not hashed (its padding holds whatever the stack held).
  CHECK(walk(kBlockB + 64, 2000).nodes[0].scalar_hash == base.nodes[0].scalar_hash);
  // A word outside any allocation stays a scalar.
  CHECK(walk(0x7e0000000000, 1000).refs[0] == std::vector<trace::GraphRef>{{'a', 0, kBlockA}});
}

TEST_CASE("graph walk: the top-level nodes and their walk indices, for SetParams") {
  g_nodes.clear();
  g_graphs.clear();
  for (uintptr_t i = 1; i <= 3; ++i) g_nodes[handle(i)] = {CU_GRAPH_NODE_TYPE_KERNEL, {kBlockA}};
  g_nodes[handle(4)] = {CU_GRAPH_NODE_TYPE_GRAPH, {}, 0, 0, 0, handle(100)};
  g_graphs[handle(99)] = {{handle(1), handle(4), handle(2)}};
  g_graphs[handle(100)] = {{handle(3)}};
  TempDir dir;
  trace::TraceWriter writer;
  REQUIRE(writer.open(dir.path().c_str(), 1, 1, 0));
  TopLevelNodes top;
  CHECK(walk_graph(fake_driver(), writer, 0xe1, reinterpret_cast<uint64_t>(handle(99)), nullptr,
                   nullptr, WalkLimits{}, &top) == 4);
  REQUIRE(top.count == 3);  // the child graph's node is not a top-level one
  const std::vector<uint64_t> pairs(top.pairs, top.pairs + 2 * top.count);
  CHECK(pairs == std::vector<uint64_t>{reinterpret_cast<uint64_t>(handle(1)), 0,
                                       reinterpret_cast<uint64_t>(handle(4)), 1,
                                       reinterpret_cast<uint64_t>(handle(2)), 3});

  GraphWatch watch;
  watch.on_instantiate(0xe1);
  watch.set_nodes(0xe1, top.pairs, top.count);  // the watch owns them now
  uint32_t index = 0;
  CHECK(watch.node_index(0xe1, reinterpret_cast<uint64_t>(handle(2)), index));
  CHECK(index == 3u);
  CHECK_FALSE(watch.node_index(0xe1, reinterpret_cast<uint64_t>(handle(3)), index));
  CHECK_FALSE(watch.node_index(0xe2, reinterpret_cast<uint64_t>(handle(2)), index));
  watch.on_instantiate(0xe1);  // instantiated again (an update): the old nodes are gone
  CHECK_FALSE(watch.node_index(0xe1, reinterpret_cast<uint64_t>(handle(2)), index));
  auto* spare = static_cast<uint64_t*>(std::calloc(2, sizeof(uint64_t)));
  watch.set_nodes(0xe9, spare, 1);  // an exec the watch does not hold: freed, not kept
  watch.on_destroy(0xe1);
}

TEST_CASE("graph walk: bounded by node count and depth; a driver without functions is fine") {
  g_nodes.clear();
  g_graphs.clear();
  for (uintptr_t i = 1; i <= 50; ++i) {
    g_nodes[handle(i)] = {CU_GRAPH_NODE_TYPE_KERNEL, {kBlockA}};
    g_graphs[handle(1000)].nodes.push_back(handle(i));
  }
  // A child graph that contains itself: the depth bound stops it.
  g_nodes[handle(60)] = {CU_GRAPH_NODE_TYPE_GRAPH, {}, 0, 0, 0, handle(2000)};
  g_graphs[handle(2000)] = {{handle(60)}};
  std::vector<uint64_t> bases;
  WalkLimits limits;
  limits.max_nodes = 20;
  GraphSink sink = walk_and_read(fake_driver(), handle(1000), bases, limits);
  CHECK(sink.nodes.size() == 20);
  CHECK_FALSE(sink.graphs[0].complete);
  sink = walk_and_read(fake_driver(), handle(2000), bases);
  CHECK(sink.nodes.size() == 9);  // depths 0..8
  CHECK_FALSE(sink.graphs[0].complete);

  GraphDriver bare;
  bare.get_nodes = &get_nodes;  // types unknown: nodes skipped, the summary still written
  sink = walk_and_read(bare, handle(1000), bases);
  CHECK(sink.nodes.empty());
  CHECK(sink.graphs.size() == 1);
}

// The runtime launches a CUkernel (cuLibraryGetKernel), which the CUfunction getters refuse as
// the driver does; the node captured from it names the kernel's CUfunction (here node 1).
constexpr uintptr_t kLaunchedKernel = 0x5000;
int function_param_info_refusing_kernels(void* func, size_t index, size_t* offset, size_t* size) {
  if (func == handle(kLaunchedKernel)) return CUDA_ERROR_INVALID_HANDLE;
  return func_param_info(func, index, offset, size);
}
int kernel_param_info(void* kernel, size_t index, size_t* offset, size_t* size) {
  if (kernel != handle(kLaunchedKernel)) return CUDA_ERROR_INVALID_HANDLE;
  return func_param_info(handle(1), index, offset, size);
}
int function_name_refusing_kernels(const char** name, void* func) {
  if (func == handle(kLaunchedKernel)) return CUDA_ERROR_INVALID_HANDLE;
  return func_name(name, func);
}
int kernel_name(const char** name, void* kernel) {
  if (kernel != handle(kLaunchedKernel)) return CUDA_ERROR_INVALID_HANDLE;
  *name = "_Z4bumpPi";
  return 0;
}
int kernel_function(void** function, void* kernel) {
  if (kernel != handle(kLaunchedKernel)) return CUDA_ERROR_INVALID_HANDLE;
  *function = handle(1);
  return 0;
}
GraphDriver g_launch_driver;  // the listener's callbacks are plain functions

struct KernelRecordSink : trace::TraceSink {
  std::vector<uint32_t> orders;
  std::vector<uint64_t> step_values;  // parameter 1 of each 'a' record
  std::vector<std::string> names;
  void on_kernel_args(const trace::KernelArgsRecord& r) override {
    orders.push_back(r.order);
    for (const trace::KernelArg& a : r.args)
      if (a.param == 1) step_values.push_back(a.value);
  }
  void on_kernel_name(const trace::KernelNameRecord& r) override { names.emplace_back(r.name); }
};

// Three eager launches of `launched` with steps 1, 2, 3, then the walk of a graph whose one node
// captured step 40; returns the kernel records written.
KernelRecordSink eager_steps_then_walk(void* launched) {
  g_nodes.clear();
  g_graphs.clear();
  g_nodes[handle(1)] = {CU_GRAPH_NODE_TYPE_KERNEL, {kBlockA, 40}};
  g_graphs[handle(99)] = {{handle(1)}};
  TempDir dir;
  trace::TraceWriter writer;
  REQUIRE(writer.open(dir.path().c_str(), 1, 1, 0));
  kernel_launches::reset_for_tests();
  kernel_launches::Listener listener;
  listener.writer = &writer;
  listener.param_info = [](void* f, size_t index, size_t* offset, size_t* size) {
    return launched_param_info(g_launch_driver, f, index, offset, size);
  };
  listener.function_name = [](const char** name, void* f) {
    return launched_name(g_launch_driver, name, f);
  };
  listener.function_of_kernel = [](void** f, void* kernel) {
    return g_launch_driver.kernel_function(f, kernel);
  };
  kernel_launches::listen(listener);
  for (uint32_t step = 1; step <= 3; ++step) {
    uint64_t data = kBlockA;
    uint32_t step_argument = step;
    void* params[] = {&data, &step_argument};
    kernel_launches::on_launch(launched, 1, 1, 1, 32, 1, 1, 48, params);
  }
  kernel_launches::on_graph_launch(0xe0);  // coverage starts: the next launch is named
  uint64_t data = kBlockA;
  uint32_t step_argument = 4;
  void* params[] = {&data, &step_argument};
  kernel_launches::on_launch(launched, 1, 1, 1, 32, 1, 1, 48, params);
  walk_graph(g_launch_driver, writer, 0xe1, 99, [](void*, uint64_t, uint64_t, uint64_t) {},
             nullptr);
  kernel_launches::reset_for_tests();
  KernelRecordSink sink;
  const auto error = trace::read_trace(writer.path(), sink);
  REQUIRE_MESSAGE(!error, error->to_string());
  return sink;
}

TEST_CASE("kernel launches: a node's arguments beside its kernel's eager launches, by either handle") {
  g_launch_driver = fake_driver();
  g_launch_driver.func_param_info = &function_param_info_refusing_kernels;
  g_launch_driver.kernel_param_info = &kernel_param_info;
  g_launch_driver.func_name = &function_name_refusing_kernels;
  g_launch_driver.kernel_name = &kernel_name;
  g_launch_driver.kernel_function = &kernel_function;
  for (void* launched : {handle(kLaunchedKernel), handle(1)}) {
    CAPTURE(launched);
    const KernelRecordSink sink = eager_steps_then_walk(launched);
    // The node's own (order 0), then the last eager launches, the most recent first.
    CHECK(sink.orders == std::vector<uint32_t>{0, 1, 2, 3, 4});
    CHECK(sink.step_values == std::vector<uint64_t>{40, 4, 3, 2, 1});
    CHECK(sink.names == std::vector<std::string>{"_Z4bumpPi"});
  }
}

TEST_CASE("graph watch: first launches, then quiet; a free that hits an exec watches it") {
  GraphWatch watch;
  CHECK_FALSE(watch.anything());
  CHECK_FALSE(watch.on_sync(0));  // no exec yet, nothing pending
  watch.on_instantiate(0xe1);
  watch.add_base(0xe1, kBlockA);
  CHECK(watch.launches_wanted());
  CHECK(watch.syncs_wanted());
  for (uint32_t i = 0; i < trace::kRecordedFirstLaunches; ++i) CHECK(watch.on_launch(0xe1));
  CHECK_FALSE(watch.launches_wanted());  // the steady replay loop makes no callback
  CHECK(watch.on_sync(0));               // follows recorded launches
  CHECK_FALSE(watch.on_sync(0));
  CHECK(watch.on_sync(700));  // a failed sync always
  CHECK_FALSE(watch.on_launch(0xe1));
  watch.on_free(kBlockB, kSize);  // not this exec's memory
  CHECK_FALSE(watch.launches_wanted());
  watch.on_free(kBlockA, 0);
  CHECK(watch.launches_wanted());
  CHECK(watch.on_launch(0xe1));
  CHECK(watch.on_launch(0xe1));
  watch.on_destroy(0xe1);
  CHECK_FALSE(watch.launches_wanted());
  CHECK_FALSE(watch.on_launch(0xe1));
  CHECK_FALSE(watch.on_launch(0xbad));  // never instantiated under capguard
}

TEST_CASE("graph watch: after an instantiate, the first launch of another exec is recorded") {
  GraphWatch watch;
  watch.on_instantiate(0xe1);
  for (uint32_t i = 0; i < trace::kRecordedFirstLaunches; ++i) CHECK(watch.on_launch(0xe1));
  CHECK_FALSE(watch.launches_wanted());  // one exec: nothing else to tell apart
  watch.on_instantiate(0xe2);            // a new capture while 0xe1 lives
  CHECK(watch.launches_wanted());
  CHECK(watch.on_launch(0xe2));  // its own first launches, as ever
  CHECK(watch.on_launch(0xe1));  // the old exec, past its first launches: recorded once
  CHECK_FALSE(watch.on_launch(0xe1));
  for (uint32_t i = 1; i < trace::kRecordedFirstLaunches; ++i) CHECK(watch.on_launch(0xe2));
  CHECK_FALSE(watch.launches_wanted());
  // Only the newest replayed: the wish expires after a bounded number of its launches.
  watch.on_instantiate(0xe3);
  for (int i = 0; i < 200; ++i) watch.on_launch(0xe3);
  CHECK_FALSE(watch.launches_wanted());
  CHECK_FALSE(watch.on_launch(0xe1));
}

TEST_CASE("graph watch: a full table degrades to watching unknown execs after a free") {
  GraphWatch watch;
  for (uint64_t e = 1; e <= GraphWatch::kSlots + 5; ++e) watch.on_instantiate(e * 16);
  const uint64_t unknown = (GraphWatch::kSlots + 5) * 16;
  bool any_unknown = false;
  for (uint64_t e = 1; e <= GraphWatch::kSlots + 5; ++e)
    for (uint32_t i = 0; i < trace::kRecordedFirstLaunches; ++i)
      any_unknown |= !watch.on_launch(e * 16);
  CHECK(any_unknown);  // the overflowed execs are not counted
  watch.on_free(kBlockA, kSize);
  CHECK(watch.on_launch(unknown));
}

}  // namespace
}  // namespace capguard::interposer

namespace capguard::interposer {
namespace {

TEST_CASE("graph watch: live execs are counted, so stream-ordered frees can be skipped without") {
  GraphWatch watch;
  CHECK_FALSE(watch.any_live());
  watch.on_instantiate(0xe1);
  watch.on_instantiate(0xe1);  // an update re-walks the same exec
  watch.on_instantiate(0xe2);
  CHECK(watch.any_live());
  watch.on_destroy(0xe1);
  CHECK(watch.any_live());
  watch.on_destroy(0xe2);
  watch.on_destroy(0xe2);  // twice: no harm
  CHECK_FALSE(watch.any_live());
}

}  // namespace
}  // namespace capguard::interposer
