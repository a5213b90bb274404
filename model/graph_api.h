// Graph lifetime: what a call does to memory and graph execs, derived from the API
// catalog (trace/api_catalog.def: its kind and its memory column, ApiInfo::memory).
#pragma once

#include <cstdint>

#include "model/api_catalog.h"
#include "trace/cuda_results.h"

namespace capguard {

enum class GraphOp : uint8_t {
  None,
  AllocDevice,  // cudaMalloc, cuMemAlloc, cudaMallocAsync, cuMemMap, managed ...
  AllocHost,    // cudaMallocHost, cudaHostAlloc, cuMemHostAlloc, cudaHostRegister ...
  FreeDevice,   // cudaFree, cuMemFree, cudaFreeAsync, cuMemFreeAsync
  FreeHost,     // cudaFreeHost, cuMemFreeHost, cudaHostUnregister, cuMemHostUnregister
  Unmap,        // cuMemUnmap: a range, not an allocation base
  ExecDestroy,  // cudaGraphExecDestroy, cuGraphExecDestroy
  ExecUpdate,   // cudaGraphExecUpdate, cuGraphExecUpdate
  ExecSetParams,  // cudaGraphExecKernelNodeSetParams and friends: one node re-pointed
  FrameworkAlloc,  // a framework allocator handed a block out (trace/framework_memory.def)
  FrameworkFree,   // ... or was given it back: no CUDA call, the program's next tensor gets it
};

constexpr GraphOp graph_op(const ApiInfo& api) {
  switch (api.memory) {
    case MemoryOp::AllocDevice:
      return GraphOp::AllocDevice;
    case MemoryOp::AllocHost:
      return GraphOp::AllocHost;
    case MemoryOp::FreeDevice:
      return GraphOp::FreeDevice;
    case MemoryOp::FreeHost:
      return GraphOp::FreeHost;
    case MemoryOp::Unmap:
      return GraphOp::Unmap;
    case MemoryOp::FrameworkAlloc:
      return GraphOp::FrameworkAlloc;
    case MemoryOp::FrameworkFree:
      return GraphOp::FrameworkFree;
    case MemoryOp::None:
      break;
  }
  if (api.kind == ApiKind::GraphExecDestroy) return GraphOp::ExecDestroy;
  if (api.kind == ApiKind::GraphExecUpdate) return GraphOp::ExecUpdate;
  if (api.kind == ApiKind::GraphExecSetParams) return GraphOp::ExecSetParams;
  return GraphOp::None;
}
inline bool is_alloc(GraphOp op) { return op == GraphOp::AllocDevice || op == GraphOp::AllocHost; }
inline bool is_free(GraphOp op) {
  return op == GraphOp::FreeDevice || op == GraphOp::FreeHost || op == GraphOp::Unmap;
}
using trace::is_sticky_error;

}  // namespace capguard
