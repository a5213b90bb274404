// Walks an instantiated graph once (at the EXIT of a successful instantiate or update) and
// writes what its nodes reference: the 'g' and 'G' records of format.h. Kernel arguments come
// from the driver's parameter info (offset and size of each parameter, CUDA >= 12.4); every
// pointer-sized argument inside a live allocation (cuMemGetAddressRange) is an address the
// graph holds, and so are memcpy sources/destinations and memset destinations. Child graphs
// are walked too (bounded depth). No call made here synchronizes, allocates device memory or
// touches the runtime's error state; the caller holds an InToolScope so none is recorded.
#pragma once

#include <cstddef>
#include <cstdint>

#include "trace/graph_record.h"
#include "trace/writer.h"

namespace capguard::interposer {

// The driver functions the walk uses, resolved from the loaded libcuda (graph_walker.cpp) or
// faked in tests. Any may be null: the walk records what it can.
struct GraphDriver {
  int (*get_nodes)(void* graph, void** nodes, size_t* count) = nullptr;
  int (*get_edges)(void* graph, void** from, void** to, void* edge_data, size_t* count) = nullptr;
  int (*node_type)(void* node, int* type) = nullptr;
  int (*kernel_params)(void* node, void* params) = nullptr;  // CUDA_KERNEL_NODE_PARAMS_v2
  int (*func_param_info)(void* func, size_t index, size_t* offset, size_t* size) = nullptr;
  int (*kernel_param_info)(void* kernel, size_t index, size_t* offset, size_t* size) = nullptr;
  int (*func_name)(const char** name, void* func) = nullptr;
  int (*kernel_name)(const char** name, void* kernel) = nullptr;
  int (*kernel_function)(void** func, void* kernel) = nullptr;  // a CUkernel's CUfunction, here
  int (*memcpy_params)(void* node, void* params) = nullptr;  // CUDA_MEMCPY3D
  int (*memset_params)(void* node, void* params) = nullptr;  // CUDA_MEMSET_NODE_PARAMS
  int (*child_graph)(void* node, void** graph) = nullptr;
  int (*address_range)(uint64_t* base, size_t* size, uint64_t address) = nullptr;
};
bool load_graph_driver(GraphDriver& driver);

// A launch's handle is a CUfunction or, from the runtime (cuLibraryGetKernel), a CUkernel, which
// the CUfunction getters refuse: these ask the one form, then the other. Nonzero: neither knew.
int launched_param_info(const GraphDriver& driver, void* handle, size_t index, size_t* offset,
                        size_t* size);
int launched_name(const GraphDriver& driver, const char** name, void* handle);

// Receives each address the graph holds with the base and size of the allocation it lies in
// (base 0: unknown), for the interposer's watch and its held memory.
using BaseSink = void (*)(void* context, uint64_t base, uint64_t size, uint64_t address);

struct WalkLimits {
  size_t max_nodes = 65536;  // in all, child graphs included
  uint32_t max_depth = 8;
  uint32_t max_params = 512;       // per kernel
  uint32_t max_param_bytes = 4096;  // of one struct argument, searched for addresses
};

// The graph's top-level nodes as walked: (handle, walk index) pairs in a malloc'd array the
// receiver owns (null when none). Only the first kMaxTopLevelNodes are kept.
struct TopLevelNodes {
  static constexpr uint32_t kMaxTopLevelNodes = 8192;
  uint64_t* pairs = nullptr;
  uint32_t count = 0;
};

// Writes the exec's 'g' records and its 'G' record. Returns the number of nodes walked. With
// `top_level`, also hands over the top-level node handles (for cudaGraphExec*NodeSetParams).
size_t walk_graph(const GraphDriver& driver, trace::TraceWriter& writer, uint64_t exec,
                  uint64_t graph, BaseSink on_base, void* context,
                  const WalkLimits& limits = WalkLimits{}, TopLevelNodes* top_level = nullptr);

// The type and kernel name of one node (for a rejected update's error node). False if unknown.
bool describe_node(const GraphDriver& driver, void* node, uint32_t& type, const char*& name);

}  // namespace capguard::interposer
