#include "interposer/torch_allocator.h"

#include <pthread.h>

#include <atomic>
#include <cstring>
#include <functional>

#include "interposer/elf_symbols.h"

namespace capguard::interposer::torch_allocator {
namespace {

// Where a c10 TraceEntry keeps what capguard reads, by the mangled name of its type (which the
// hook's own mangled name contains). Measured with offsetof against each release's headers.
struct EntryLayout {
  const char* hook;  // NativeCachingAllocator::attachAllocatorTraceTracker, mangled
  size_t action, addr, stream, size, pool;
  int alloc, free_requested;  // TraceEntry::Action values
};
constexpr EntryLayout kLayouts[] = {
    // Both: action_ (an int enum), device_, addr_, context_ (a shared_ptr), stream_, size_,
    // mempool_ (a pair of ids); measured for PyTorch 2.8, 2.10, 2.11 and 2.14.
    // c10::CachingDeviceAllocator::TraceEntry (PyTorch 2.11 on).
    {"_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator27attachAllocatorTraceTrack"
     "erESt8functionIFvRKNS_22CachingDeviceAllocator10TraceEntryEEE",
     0, 8, 32, 40, 48, 0, 1},
    // c10::cuda::CUDACachingAllocator::TraceEntry (up to PyTorch 2.10).
    {"_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator27attachAllocatorTraceTrack"
     "erESt8functionIFvRKNS1_10TraceEntryEEE",
     0, 8, 32, 40, 48, 0, 1},
};

constexpr char kLibrary[] = "/libc10_cuda.so";
constexpr char kAllocator[] = "_ZN3c104cuda20CUDACachingAllocator9allocatorE";
constexpr char kInitialized[] =
    "_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator11initializedEv";
constexpr char kVtable[] = "_ZTVN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocatorE";

struct RawEntry;  // PyTorch's TraceEntry, read through its layout only
using Tracker = std::function<void(const RawEntry&)>;

std::atomic<State> g_state{State::Absent};
trace::FrameworkHookResult g_refusal = trace::FrameworkHookResult::Attached;
const EntryLayout* g_layout = nullptr;
EntrySink g_sink = nullptr;
pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;  // one attach at a time

// What the symbols say, once per process.
struct Found {
  bool searched = false;
  uint64_t bias = 0;
  ElfSymbol allocator{kAllocator}, initialized{kInitialized}, vtable{kVtable};
  ElfSymbol hooks[sizeof kLayouts / sizeof kLayouts[0]];
} g_found;

template <typename T>
T field(const RawEntry& entry, size_t offset) {
  T value;
  memcpy(&value, reinterpret_cast<const unsigned char*>(&entry) + offset, sizeof value);
  return value;
}

bool decode(const EntryLayout& layout, const RawEntry& entry, AllocatorEntry& out) {
  const int action = field<int>(entry, layout.action);
  if (action == layout.alloc) {
    out.op = trace::FrameworkMemoryOp::Alloc;
  } else if (action == layout.free_requested) {
    out.op = trace::FrameworkMemoryOp::Free;
  } else {
    return false;  // completed frees, segments (cudaMalloc / cudaFree are seen), snapshots, OOM
  }
  // A graph's private pool or a MemPool keeps its memory for its graphs: only the default
  // pool ({0, 0}) gives memory back to the program's next tensor.
  if (field<uint64_t>(entry, layout.pool) != 0 || field<uint64_t>(entry, layout.pool + 8) != 0)
    return false;
  out.address = field<uint64_t>(entry, layout.addr);
  out.size = field<uint64_t>(entry, layout.size);
  out.stream = field<uint64_t>(entry, layout.stream);
  return out.address != 0;
}

void on_entry(const RawEntry& entry) {
  AllocatorEntry decoded;
  const EntryLayout* layout = g_layout;
  if (layout != nullptr && g_sink != nullptr && decode(*layout, entry, decoded)) g_sink(decoded);
}

State refuse(trace::FrameworkHookResult why) {
  g_refusal = why;
  g_state.store(State::Refused, std::memory_order_release);
  return State::Refused;
}

}  // namespace

State try_attach(EntrySink sink) {
  const State now = g_state.load(std::memory_order_acquire);
  if (now == State::Attached || now == State::Refused) return now;
  pthread_mutex_lock(&g_mutex);
  State result = g_state.load(std::memory_order_relaxed);
  if (result == State::Absent || result == State::Waiting) {
    char path[4096];
    uint64_t bias = 0;
    if (!find_loaded_library(kLibrary, path, sizeof path, bias)) {
      result = State::Absent;
    } else {
      if (!g_found.searched) {
        g_found.searched = true;
        g_found.bias = bias;
        for (size_t i = 0; i < sizeof kLayouts / sizeof kLayouts[0]; ++i)
          g_found.hooks[i].name = kLayouts[i].hook;
        ElfSymbol* all[] = {&g_found.allocator, &g_found.initialized, &g_found.vtable};
        ElfSymbol symbols[3 + sizeof kLayouts / sizeof kLayouts[0]];
        for (size_t i = 0; i < 3; ++i) symbols[i] = *all[i];
        for (size_t i = 0; i < sizeof kLayouts / sizeof kLayouts[0]; ++i)
          symbols[3 + i] = g_found.hooks[i];
        read_elf_symbols(path, symbols, sizeof symbols / sizeof symbols[0]);
        for (size_t i = 0; i < 3; ++i) *all[i] = symbols[i];
        for (size_t i = 0; i < sizeof kLayouts / sizeof kLayouts[0]; ++i)
          g_found.hooks[i] = symbols[3 + i];
      }
      const EntryLayout* layout = nullptr;
      uint64_t hook = 0;
      for (size_t i = 0; i < sizeof kLayouts / sizeof kLayouts[0] && layout == nullptr; ++i)
        if (g_found.hooks[i].value != 0) layout = &kLayouts[i], hook = g_found.hooks[i].value;
      if (g_found.allocator.value == 0 || g_found.initialized.value == 0 ||
          g_found.vtable.value == 0) {
        result = refuse(trace::FrameworkHookResult::NoSymbols);
      } else if (layout == nullptr) {
        result = refuse(trace::FrameworkHookResult::UnknownLayout);
      } else {
        const uint64_t b = g_found.bias;
        void* allocator = nullptr;
        memcpy(&allocator, reinterpret_cast<void*>(b + g_found.allocator.value), sizeof allocator);
        if (allocator == nullptr) {
          result = State::Waiting;
        } else {
          // The live allocator is the native caching allocator when its vtable is that class's
          // (the vptr points past the offset-to-top and typeinfo words).
          uint64_t vptr = 0;
          memcpy(&vptr, allocator, sizeof vptr);
          const uint64_t table = b + g_found.vtable.value;
          const bool native = vptr >= table && vptr < table + g_found.vtable.size;
          bool holds_hook = false;
          for (uint64_t slot = vptr; native && slot + 8 <= table + g_found.vtable.size; slot += 8)
            holds_hook = holds_hook || *reinterpret_cast<const uint64_t*>(slot) == b + hook;
          if (!native || !holds_hook) {
            result = refuse(trace::FrameworkHookResult::OtherAllocator);
          } else if (!reinterpret_cast<bool (*)(void*)>(b + g_found.initialized.value)(allocator)) {
            result = State::Waiting;  // no device allocators yet: the tracker would reach none
          } else {
            g_layout = layout;
            g_sink = sink;
            // The hook takes the std::function by value: the same libstdc++ layout as PyTorch's.
            using Attach = void (*)(void*, Tracker);
            reinterpret_cast<Attach>(b + hook)(allocator, Tracker(&on_entry));
            result = State::Attached;
          }
        }
      }
    }
    if (result != State::Refused) g_state.store(result, std::memory_order_release);
  }
  pthread_mutex_unlock(&g_mutex);
  return result;
}

trace::FrameworkHookResult refusal() { return g_refusal; }

bool decode_for_tests(const char* entry_type, const void* entry, AllocatorEntry& out) {
  for (const EntryLayout& layout : kLayouts)
    if (strstr(layout.hook, entry_type) != nullptr)
      return decode(layout, *static_cast<const RawEntry*>(entry), out);
  return false;
}

}  // namespace capguard::interposer::torch_allocator
