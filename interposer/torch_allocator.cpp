#include "interposer/torch_allocator.h"

#include <pthread.h>

#include <atomic>
#include <cstring>
#include <functional>

#include "interposer/elf_symbols.h"

namespace capguard::interposer::torch_allocator {
namespace {

// Where a c10 TraceEntry keeps what capguard reads: action_ (an int enum), device_, addr_,
// context_ (a shared_ptr), stream_, size_, mempool_ (a pair of ids). Measured with offsetof
// against the headers of PyTorch 2.8, 2.10, 2.11 and 2.14: the same in all of them.
struct EntryLayout {
  size_t action, addr, stream, size, pool;
  int alloc, free_requested;  // TraceEntry::Action values
};
constexpr EntryLayout kLayout{0, 8, 32, 40, 48, 0, 1};

// NativeCachingAllocator::attachAllocatorTraceTracker, mangled: its TraceEntry type moved from
// c10::cuda::CUDACachingAllocator (up to 2.10) to c10::CachingDeviceAllocator (2.11 on). A
// version whose hook has another signature is not one kLayout was measured for: refused.
constexpr const char* kHooks[] = {
    "_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator27attachAllocatorTraceTrack"
    "erESt8functionIFvRKNS_22CachingDeviceAllocator10TraceEntryEEE",
    "_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator27attachAllocatorTraceTrack"
    "erESt8functionIFvRKNS1_10TraceEntryEEE",
};
constexpr size_t kHookCount = sizeof kHooks / sizeof kHooks[0];

constexpr char kLibrary[] = "/libc10_cuda.so";

struct RawEntry;  // PyTorch's TraceEntry, read through kLayout only
using Tracker = std::function<void(const RawEntry&)>;

std::atomic<State> g_state{State::Absent};
trace::FrameworkHookResult g_refusal = trace::FrameworkHookResult::Attached;
EntrySink g_sink = nullptr;
pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;  // one attach at a time
uint64_t g_objects_seen = ~0ull;  // loaded-object count at the last search for the library

// libc10_cuda.so's symbols, read once: the allocator, its class's vtable and initialized(),
// then the hooks in kHooks' order.
enum : size_t { kAllocatorSymbol, kVtableSymbol, kInitializedSymbol, kFirstHook };
ElfSymbol g_symbols[kFirstHook + kHookCount] = {
    {"_ZN3c104cuda20CUDACachingAllocator9allocatorE"},
    {"_ZTVN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocatorE"},
    {"_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator11initializedEv"},
    {kHooks[0]},
    {kHooks[1]},
};
bool g_symbols_read = false;
uint64_t g_bias = 0;

template <typename T>
T field(const RawEntry& entry, size_t offset) {
  T value;
  memcpy(&value, reinterpret_cast<const unsigned char*>(&entry) + offset, sizeof value);
  return value;
}

bool decode(const RawEntry& entry, AllocatorEntry& out) {
  const EntryLayout& layout = kLayout;
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
  if (g_sink != nullptr && decode(entry, decoded)) g_sink(decoded);
}

State refuse(trace::FrameworkHookResult why) {
  g_refusal = why;
  g_state.store(State::Refused, std::memory_order_release);
  return State::Refused;
}

// With the library loaded and its symbols read: attaches, or says why not yet or never.
State attach_to_native_allocator(uint64_t bias, EntrySink sink) {
  const ElfSymbol& vtable = g_symbols[kVtableSymbol];
  uint64_t hook = 0;
  for (size_t i = 0; i < kHookCount && hook == 0; ++i) hook = g_symbols[kFirstHook + i].value;
  if (g_symbols[kAllocatorSymbol].value == 0 || vtable.value == 0 ||
      g_symbols[kInitializedSymbol].value == 0)
    return refuse(trace::FrameworkHookResult::NoSymbols);
  if (hook == 0) return refuse(trace::FrameworkHookResult::UnknownLayout);
  void* allocator = nullptr;
  memcpy(&allocator, reinterpret_cast<void*>(bias + g_symbols[kAllocatorSymbol].value),
         sizeof allocator);
  if (allocator == nullptr) return State::Waiting;
  // The live allocator is the native caching allocator when its vptr points into that class's
  // vtable (past the offset-to-top and typeinfo words) and the vtable holds the hook.
  uint64_t vptr = 0;
  memcpy(&vptr, allocator, sizeof vptr);
  const uint64_t table = bias + vtable.value, table_end = table + vtable.size;
  bool holds_hook = false;
  for (uint64_t slot = vptr; vptr >= table && slot + 8 <= table_end; slot += 8)
    holds_hook = holds_hook || *reinterpret_cast<const uint64_t*>(slot) == bias + hook;
  if (!holds_hook) return refuse(trace::FrameworkHookResult::OtherAllocator);
  if (!reinterpret_cast<bool (*)(void*)>(bias + g_symbols[kInitializedSymbol].value)(allocator))
    return State::Waiting;  // no device allocators yet: the tracker would reach none
  g_sink = sink;
  // The hook takes the std::function by value: the same libstdc++ layout as PyTorch's.
  using Attach = void (*)(void*, Tracker);
  reinterpret_cast<Attach>(bias + hook)(allocator, Tracker(&on_entry));
  return State::Attached;
}

}  // namespace

State try_attach(EntrySink sink) {
  const State now = g_state.load(std::memory_order_acquire);
  if (now == State::Attached || now == State::Refused) return now;
  pthread_mutex_lock(&g_mutex);
  State result = g_state.load(std::memory_order_relaxed);
  char path[4096];
  uint64_t bias = 0;
  // A program without PyTorch asks at every capture: the objects are searched again only
  // when one was loaded since.
  const uint64_t objects = loaded_object_count();
  if (result == State::Absent && objects != g_objects_seen) {
    g_objects_seen = objects;
    if (find_loaded_library(kLibrary, path, sizeof path, bias)) result = State::Waiting;
  }
  if (result == State::Waiting) {
    if (!g_symbols_read) {
      g_symbols_read = true;
      find_loaded_library(kLibrary, path, sizeof path, bias);
      read_elf_symbols(path, g_symbols, sizeof g_symbols / sizeof g_symbols[0]);
      g_bias = bias;
    }
    result = attach_to_native_allocator(g_bias, sink);
  }
  if (result != State::Refused) g_state.store(result, std::memory_order_release);
  pthread_mutex_unlock(&g_mutex);
  return result;
}

trace::FrameworkHookResult refusal() { return g_refusal; }

bool decode_for_tests(const char* entry_type, const void* entry, AllocatorEntry& out) {
  for (const char* hook : kHooks)
    if (strstr(hook, entry_type) != nullptr)
      return decode(*static_cast<const RawEntry*>(entry), out);
  return false;
}

}  // namespace capguard::interposer::torch_allocator
