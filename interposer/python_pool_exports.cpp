// libcapguard.so's entry points for capguard's Python start-up module
// (python/capguard_python_startup/sitecustomize.py), which installs a cupy.cuda.MemoryHook in the
// thread that imports CuPy: CuPy's pool keeps a dropped array's memory and hands it to the next
// array without any CUDA call, so only the pool itself can say when that happens. The module
// calls these through ctypes.PyDLL(None) (the preloaded library's symbols, the GIL held, so the
// recorder reads the Python stack as it does for any call). Mechanical only: the recorder
// records a chunk's free or reuse when a live exec holds an address in it.
#include <atomic>
#include <cstdint>

#include "interposer/recorder.h"

namespace interposer = capguard::interposer;
using capguard::trace::FrameworkMemory;

namespace {
// The module's words for what the pool did (sitecustomize.py spells the same numbers).
enum PoolOp : int32_t { kPoolMalloc = 1, kPoolFree = 2 };
}  // namespace

// Whether capguard records the pool's frees (1: install the hook; 0: capguard is not recording
// here, or CAPGUARD_FRAMEWORK_HOOKS=0). The hook's attach event is written now or at cuInit.
extern "C" __attribute__((visibility("default"))) int32_t capguard_cupy_pool_attach() {
  return interposer::request_python_pool_hook() ? 1 : 0;
}

// Where the "a live exec holds memory" flag lives: the hook reads it before calling in.
extern "C" __attribute__((visibility("default"))) const std::atomic<int32_t>*
capguard_memory_held_flag() {
  return &interposer::g_memory_held;
}

// A chunk CuPy's pool handed out (kPoolMalloc) or took back (kPoolFree).
extern "C" __attribute__((visibility("default"))) void capguard_cupy_pool_event(int32_t op,
                                                                                uint64_t address,
                                                                                uint64_t size) {
  interposer::Recorder* recorder = interposer::live_recorder();
  if (recorder == nullptr || address == 0 || (op != kPoolMalloc && op != kPoolFree)) return;
  recorder->on_python_pool_entry(
      op == kPoolMalloc ? FrameworkMemory::CupyAlloc : FrameworkMemory::CupyFree, address, size);
}
