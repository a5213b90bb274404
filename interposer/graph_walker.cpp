#include "interposer/graph_walker.h"

#include <cuda.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "interposer/kernel_launches.h"

namespace capguard::interposer {
namespace {

// cuGraphGetEdges without edge data (drivers before CUDA 12.3), for the one question asked here.
using GetEdgesV1 = int (*)(void* graph, void** from, void** to, size_t* count);
GetEdgesV1 g_get_edges_v1 = nullptr;
int edges_through_v1(void* graph, void** from, void** to, void* edge_data, size_t* count) {
  if (edge_data != nullptr) return 1;  // CUDA_ERROR_INVALID_VALUE: not on this driver
  return g_get_edges_v1(graph, from, to, count);
}

template <typename Fn>
void resolve(void* lib, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
}

constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001b3ull;
uint64_t mix(uint64_t hash, uint64_t value) { return (hash ^ value) * kFnvPrime; }
uint64_t hash_text(uint64_t hash, const char* text) {
  for (; text != nullptr && *text != '\0'; ++text)
    hash = mix(hash, static_cast<unsigned char>(*text));
  return hash;
}

struct Walk {
  const GraphDriver& driver;
  trace::TraceWriter& writer;
  uint64_t exec;
  BaseSink on_base;
  void* context;
  const WalkLimits& limits;
  char* buffer;
  trace::GraphRef* refs;
  size_t walked = 0;
  size_t edges = 0;
  uint64_t hash = kFnvBasis;
  bool complete = true;
  TopLevelNodes* top_level = nullptr;

  // Cheap filter before asking the driver about a struct's word: a user-space address, not a
  // small count, size or stride.
  static bool looks_like_pointer(uint64_t word) { return word >= 0x100000 && word < (1ull << 48); }

  // An address the node holds, when it lies inside a live allocation (or, without the
  // driver's range query, any value that could be a pointer).
  bool keep(uint64_t address) {
    if (address < 0x10000) return false;
    uint64_t base = 0;
    size_t size = 0;
    if (driver.address_range != nullptr && driver.address_range(&base, &size, address) != 0)
      return false;
    if (on_base != nullptr) on_base(context, base, size, address);
    return true;
  }

  void emit(uint32_t index, uint32_t depth, uint32_t type, const char* name, size_t ref_count) {
    trace::GraphNodeRecord record;
    record.exec = exec;
    record.index = index;
    record.depth = depth;
    record.type = type;
    record.name = name != nullptr ? std::string_view(name) : std::string_view();
    // The node's shape goes with its first record only.
    for (uint32_t i = 0; i < shape.geometry_count; ++i) record.geometry[i] = shape.geometry[i];
    record.geometry_count = shape.geometry_count;
    record.has_scalars = shape.has_scalars;
    record.scalar_hash = shape.scalar_hash;
    size_t first = 0;
    do {  // a node with more refs than one record holds is written as several records
      const size_t count = ref_count - first < trace::kMaxRefsPerRecord ? ref_count - first
                                                                        : trace::kMaxRefsPerRecord;
      record.refs = {refs + first, count};
      const size_t n = trace::format_graph_node(buffer, trace::kGraphRecordBufferSize, record);
      if (n != 0) writer.write_record(buffer, n);
      first += count;
      record.geometry_count = 0;
      record.has_scalars = false;
    } while (first < ref_count);
  }

  // The current node's geometry and scalar hash, filled by the *_refs functions below.
  struct Shape {
    uint64_t geometry[trace::kMaxGeometry] = {};
    uint32_t geometry_count = 0;
    bool has_scalars = false;
    uint64_t scalar_hash = 0;
    // Frozen values: the kernel's function and its arguments of at most 8 bytes that are no ref
    // (kernel_launches.h writes them beside the function's last eager launches).
    void* function = nullptr;
    void* kernel = nullptr;
    trace::KernelArg args[trace::kMaxKernelArgs];
    size_t arg_count = 0;
  } shape = {};
  void set_geometry(std::initializer_list<uint64_t> values) {
    shape.geometry_count = 0;
    for (uint64_t v : values)
      if (shape.geometry_count < trace::kMaxGeometry) shape.geometry[shape.geometry_count++] = v;
  }

  size_t kernel_refs(void* node, const char*& name) {
    CUDA_KERNEL_NODE_PARAMS params;
    std::memset(&params, 0, sizeof params);
    if (driver.kernel_params == nullptr || driver.kernel_params(node, &params) != 0) return 0;
    name = nullptr;
    if (params.func != nullptr && driver.func_name != nullptr) {
      driver.func_name(&name, params.func);
    } else if (params.kern != nullptr && driver.kernel_name != nullptr) {
      driver.kernel_name(&name, params.kern);
    }
    hash = hash_text(hash, name);
    set_geometry({params.gridDimX, params.gridDimY, params.gridDimZ, params.blockDimX,
                  params.blockDimY, params.blockDimZ, params.sharedMemBytes});
    shape.function = params.func;
    shape.kernel = params.kern;
    if (params.kernelParams == nullptr) return 0;
    size_t count = 0;
    uint64_t scalars = kFnvBasis;
    for (uint32_t i = 0; i < limits.max_params; ++i) {
      size_t offset = 0, size = 0;
      int status = -1;
      if (params.func != nullptr && driver.func_param_info != nullptr) {
        status = driver.func_param_info(params.func, i, &offset, &size);
      } else if (params.kern != nullptr && driver.kernel_param_info != nullptr) {
        status = driver.kernel_param_info(params.kern, i, &offset, &size);
      }
      if (status != 0) break;  // CUDA_ERROR_INVALID_VALUE past the last parameter
      if (params.kernelParams[i] == nullptr) continue;
      shape.has_scalars = true;
      if (size == sizeof(uint64_t)) {
        uint64_t value = 0;
        std::memcpy(&value, params.kernelParams[i], sizeof value);
        if (count < trace::kMaxRefsPerRecord * 4 && keep(value)) {
          refs[count++] = {'a', i, value};
          continue;
        }
      }
      const auto* bytes = static_cast<const unsigned char*>(params.kernelParams[i]);
      if (size <= sizeof(uint64_t)) {  // a scalar
        scalars = mix(scalars, i);
        for (size_t b = 0; b < size; ++b) scalars = mix(scalars, bytes[b]);
        if (size != 0 && shape.arg_count < trace::kMaxKernelArgs) {
          uint64_t value = 0;
          std::memcpy(&value, bytes, size);
          shape.args[shape.arg_count++] = {i, static_cast<uint32_t>(size), value};
        }
        continue;
      }
      // A struct: PyTorch's elementwise kernels take their data pointers in one
      // (std::array<char*, N>). Its aligned words that lie in a live allocation are addresses
      // the node holds. The rest is not hashed: padding bytes are whatever the stack held, and
      // would make every capture look different.
      const size_t bounded = size < limits.max_param_bytes ? size : limits.max_param_bytes;
      for (size_t b = 0; b + sizeof(uint64_t) <= bounded; b += sizeof(uint64_t)) {
        uint64_t word = 0;
        std::memcpy(&word, bytes + b, sizeof word);
        if (looks_like_pointer(word) && count < trace::kMaxRefsPerRecord * 4 && keep(word))
          refs[count++] = {'a', i, word};
      }
    }
    shape.scalar_hash = scalars;
    return count;
  }

  size_t memcpy_refs(void* node) {
    CUDA_MEMCPY3D copy;
    std::memset(&copy, 0, sizeof copy);
    if (driver.memcpy_params == nullptr || driver.memcpy_params(node, &copy) != 0) return 0;
    size_t count = 0;
    const auto side = [&](char role, CUmemorytype type, const void* host, CUdeviceptr device) {
      uint64_t address = 0;
      if (type == CU_MEMORYTYPE_HOST) address = reinterpret_cast<uint64_t>(host);
      if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED) address = device;
      if (address != 0 && keep(address)) refs[count++] = {role, 0, address};
    };
    side('s', copy.srcMemoryType, copy.srcHost, copy.srcDevice);
    side('d', copy.dstMemoryType, copy.dstHost, copy.dstDevice);
    set_geometry({copy.WidthInBytes, copy.Height, copy.Depth});
    return count;
  }

  size_t memset_refs(void* node) {
    CUDA_MEMSET_NODE_PARAMS set;
    std::memset(&set, 0, sizeof set);
    if (driver.memset_params == nullptr || driver.memset_params(node, &set) != 0) return 0;
    set_geometry({set.width, set.height, set.elementSize});
    if (set.dst == 0 || !keep(set.dst)) return 0;
    refs[0] = {'d', 0, set.dst};
    return 1;
  }

  void graph(void* g, uint32_t depth) {
    if (depth > limits.max_depth) {
      complete = false;
      return;
    }
    size_t count = 0;
    if (driver.get_nodes(g, nullptr, &count) != 0) {
      complete = false;
      return;
    }
    if (driver.get_edges != nullptr) {
      size_t e = 0;
      if (driver.get_edges(g, nullptr, nullptr, nullptr, &e) == 0) edges += e;
    }
    if (count == 0) return;
    if (walked + count > limits.max_nodes) {
      complete = false;
      count = limits.max_nodes > walked ? limits.max_nodes - walked : 0;
      if (count == 0) return;
    }
    auto* nodes = static_cast<void**>(std::calloc(count, sizeof(void*)));
    if (nodes == nullptr) {
      complete = false;
      return;
    }
    size_t got = count;
    if (driver.get_nodes(g, nodes, &got) == 0) {
      if (got < count) count = got;
      if (depth == 0 && top_level != nullptr && top_level->pairs == nullptr) {
        const size_t kept =
            count < TopLevelNodes::kMaxTopLevelNodes ? count : TopLevelNodes::kMaxTopLevelNodes;
        top_level->pairs = static_cast<uint64_t*>(std::calloc(kept * 2, sizeof(uint64_t)));
      }
      for (size_t i = 0; i < count && walked < limits.max_nodes; ++i) {
        int type = -1;
        if (driver.node_type == nullptr || driver.node_type(nodes[i], &type) != 0) continue;
        const uint32_t index = static_cast<uint32_t>(walked++);
        hash = mix(hash, static_cast<uint64_t>(type) + 1);
        if (depth == 0 && top_level != nullptr && top_level->pairs != nullptr &&
            top_level->count < TopLevelNodes::kMaxTopLevelNodes && top_level->count < count) {
          top_level->pairs[2 * top_level->count] = reinterpret_cast<uint64_t>(nodes[i]);
          top_level->pairs[2 * top_level->count + 1] = index;
          ++top_level->count;
        }
        const char* name = nullptr;
        size_t ref_count = 0;
        shape = Shape{};
        if (type == CU_GRAPH_NODE_TYPE_KERNEL) {
          ref_count = kernel_refs(nodes[i], name);
        } else if (type == CU_GRAPH_NODE_TYPE_MEMCPY) {
          ref_count = memcpy_refs(nodes[i]);
        } else if (type == CU_GRAPH_NODE_TYPE_MEMSET) {
          ref_count = memset_refs(nodes[i]);
        }
        // Nodes that hold no address are still written: the analyzer counts and names them.
        emit(index, depth, static_cast<uint32_t>(type), name, ref_count);
        if (shape.function != nullptr || shape.kernel != nullptr)
          kernel_launches::write_node_args(writer, exec, index, shape.function, shape.kernel,
                                           shape.geometry, shape.args, shape.arg_count);
        if (type == CU_GRAPH_NODE_TYPE_GRAPH && driver.child_graph != nullptr) {
          void* child = nullptr;
          if (driver.child_graph(nodes[i], &child) == 0 && child != nullptr)
            graph(child, depth + 1);
        }
      }
    } else {
      complete = false;
    }
    std::free(nodes);
  }
};

}  // namespace

bool load_graph_driver(GraphDriver& d) {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (lib == nullptr) return false;
  // The versioned names are what cuda.h maps the plain names to in CUDA 13.
  resolve(lib, "cuGraphGetNodes", d.get_nodes);
  resolve(lib, "cuGraphGetEdges_v2", d.get_edges);
  if (d.get_edges == nullptr) {  // drivers before CUDA 12.3: the form without edge data
    resolve(lib, "cuGraphGetEdges", g_get_edges_v1);
    if (g_get_edges_v1 != nullptr) d.get_edges = &edges_through_v1;
  }
  resolve(lib, "cuGraphNodeGetType", d.node_type);
  resolve(lib, "cuGraphKernelNodeGetParams_v2", d.kernel_params);
  resolve(lib, "cuFuncGetParamInfo", d.func_param_info);
  resolve(lib, "cuKernelGetParamInfo", d.kernel_param_info);
  resolve(lib, "cuFuncGetName", d.func_name);
  resolve(lib, "cuKernelGetName", d.kernel_name);
  resolve(lib, "cuKernelGetFunction", d.kernel_function);
  resolve(lib, "cuGraphMemcpyNodeGetParams", d.memcpy_params);
  resolve(lib, "cuGraphMemsetNodeGetParams", d.memset_params);
  resolve(lib, "cuGraphChildGraphNodeGetGraph", d.child_graph);
  resolve(lib, "cuMemGetAddressRange_v2", d.address_range);
  dlclose(lib);
  return d.get_nodes != nullptr;
}

int launched_param_info(const GraphDriver& d, void* handle, size_t index, size_t* offset,
                        size_t* size) {
  int status = d.func_param_info != nullptr ? d.func_param_info(handle, index, offset, size) : -1;
  if (status != 0 && d.kernel_param_info != nullptr)
    status = d.kernel_param_info(handle, index, offset, size);
  return status;
}

int launched_name(const GraphDriver& d, const char** name, void* handle) {
  int status = d.func_name != nullptr ? d.func_name(name, handle) : -1;
  if (status != 0 && d.kernel_name != nullptr) status = d.kernel_name(name, handle);
  return status;
}

size_t walk_graph(const GraphDriver& driver, trace::TraceWriter& writer, uint64_t exec,
                  uint64_t graph, BaseSink on_base, void* context, const WalkLimits& limits,
                  TopLevelNodes* top_level) {
  if (driver.get_nodes == nullptr || graph == 0) return 0;
  auto* buffer = static_cast<char*>(std::malloc(trace::kGraphRecordBufferSize));
  auto* refs = static_cast<trace::GraphRef*>(
      std::calloc(trace::kMaxRefsPerRecord * 4 + 2, sizeof(trace::GraphRef)));
  if (buffer == nullptr || refs == nullptr) {
    std::free(buffer);
    std::free(refs);
    return 0;
  }
  Walk walk{driver, writer, exec, on_base, context, limits, buffer, refs};
  walk.top_level = top_level;
  walk.graph(reinterpret_cast<void*>(graph), 0);
  trace::GraphRecord summary;
  summary.exec = exec;
  summary.graph = graph;
  summary.nodes = static_cast<uint32_t>(walk.walked);
  summary.edges = static_cast<uint32_t>(walk.edges);
  summary.topology_hash = mix(mix(walk.hash, walk.walked), walk.edges);
  summary.complete = walk.complete;
  const size_t n = trace::format_graph(buffer, trace::kGraphRecordBufferSize, summary);
  if (n != 0) writer.write_record(buffer, n);
  std::free(buffer);
  std::free(refs);
  return walk.walked;
}

bool describe_node(const GraphDriver& driver, void* node, uint32_t& type, const char*& name) {
  name = nullptr;
  int raw = -1;
  if (node == nullptr || driver.node_type == nullptr || driver.node_type(node, &raw) != 0)
    return false;
  type = static_cast<uint32_t>(raw);
  if (raw == CU_GRAPH_NODE_TYPE_KERNEL && driver.kernel_params != nullptr) {
    CUDA_KERNEL_NODE_PARAMS params;
    std::memset(&params, 0, sizeof params);
    if (driver.kernel_params(node, &params) == 0) {
      if (params.func != nullptr && driver.func_name != nullptr) {
        driver.func_name(&name, params.func);
      } else if (params.kern != nullptr && driver.kernel_name != nullptr) {
        driver.kernel_name(&name, params.kern);
      }
    }
  }
  return true;
}

}  // namespace capguard::interposer
