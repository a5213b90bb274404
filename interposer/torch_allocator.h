// PyTorch's CUDA caching allocator, seen from inside: a tensor's memory freed to the cache, or
// handed to a new tensor, never reaches CUDA, so no CUDA-level tool sees it (pytorch#139355).
// The allocator's own trace hook (attachAllocatorTraceTracker, what its memory snapshots and
// NCCL's buffer registration use) calls back on every allocation and free; capguard attaches
// one tracker, once PyTorch's allocator is initialized, and hands each entry on as an
// AllocatorEntry. The recorder keeps only those of memory a live exec holds (held_memory.h).
//
// libc10_cuda.so exports neither the hook nor the allocator's class, so the hook is found by
// its mangled name in the library's symbol table (PyTorch's wheels keep it), and the live
// allocator is checked to be that class (its vtable holds that function) before it is called:
// another backend (cudaMallocAsync, a pluggable allocator) is left alone. A trace entry's fields
// are read at the offsets of the PyTorch versions listed in torch_allocator.cpp, chosen by the
// entry type's mangled name; any other is refused in words (the trace's attach event).
//
// The tracker runs under the allocator's lock: it takes no lock of capguard's that a CUDA call
// could be holding, and never calls into PyTorch or Python.
#pragma once

#include <cstdint>

#include "trace/framework_memory.h"

namespace capguard::interposer::torch_allocator {

struct AllocatorEntry {
  trace::FrameworkMemoryOp op = trace::FrameworkMemoryOp::Free;
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t stream = 0;
};

// Receives the entries of the default pool (a graph's private pool or a MemPool keeps its
// memory for its graphs: pytorch#166975; not handed on).
using EntrySink = void (*)(const AllocatorEntry& entry);

enum class State : uint8_t {
  Absent,    // libc10_cuda.so is not loaded (yet): asked again later
  Waiting,   // loaded, its allocator not initialized yet: asked again later
  Attached,  // the tracker is on
  Refused,   // never: the reason is in refusal()
};

// Attaches the tracker if PyTorch's allocator is there and initialized. Cheap once decided; a
// process that never loads PyTorch pays a search of the loaded objects per call (callers ask at
// a capture's begin and an instantiate). Never call it holding a lock of capguard's.
State try_attach(EntrySink sink);
trace::FrameworkHookResult refusal();

// For the unit tests: hands `entry`, laid out as that mangled TraceEntry type is, to the sink
// as the tracker would. False when the type is not one capguard can read.
bool decode_for_tests(const char* entry_type, const void* entry, AllocatorEntry& out);

}  // namespace capguard::interposer::torch_allocator
