// Measurement probe for CUPTI's cost (not part of capguard): can the driver entry points the CUDA
// runtime calls be wrapped without CUPTI, and at what cost? CUPTI's callbacks are resolved too
// late for this (the runtime asks cuGetProcAddress for its whole table before an injection
// attaches: proc_address_probe.cpp saw none), so this library, preloaded, answers the runtime's
// dlsym("cuGetProcAddress_v2") with a wrapper, which hands out counting trampolines for the
// launch, graph-launch and capture entry points. No CUPTI.
//   LD_PRELOAD=dlsym_probe.so [PROBE_CHECK=1] ./bench ...
// PROBE_CHECK=1 adds what a real fast path would do per launch: is any capture open, and is
// this stream one of their origin streams. At exit it prints what it saw on stderr.
#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

using DlsymFn = void* (*)(void*, const char*);
using GetProcAddressFn = CUresult (*)(const char*, void**, int, cuuint64_t,
                                      CUdriverProcAddressQueryResult*);
using LaunchKernelFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, unsigned, CUstream, void**, void**);
using GraphLaunchFn = CUresult (*)(CUgraphExec, CUstream);
using BeginCaptureFn = CUresult (*)(CUstream, CUstreamCaptureMode);
using EndCaptureFn = CUresult (*)(CUstream, CUgraph*);

DlsymFn real_dlsym() {
  static DlsymFn real = [] {
    void* f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (f == nullptr) f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    return reinterpret_cast<DlsymFn>(f);
  }();
  return real;
}

GetProcAddressFn g_real_get_proc_address = nullptr;
std::atomic<int> g_dlsym_hits{0}, g_resolved{0};
bool g_check = std::getenv("PROBE_CHECK") != nullptr;
bool g_verbose = std::getenv("PROBE_VERBOSE") != nullptr;
CUresult get_proc_address(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

// Open captures and their origin streams: what the fast path asks per launch.
std::atomic<int> g_open{0};
std::atomic<CUstream> g_origins[4] = {};

bool is_origin(CUstream s) {
  for (auto& o : g_origins) {
    if (o.load(std::memory_order_relaxed) == s) return true;
  }
  return false;
}

enum Kind { kLaunch, kGraphLaunch, kBegin, kEnd, kKinds };
const char* const kNames[kKinds] = {"cuLaunchKernel", "cuGraphLaunch", "cuStreamBeginCapture",
                                    "cuStreamEndCapture"};
constexpr int kSlots = 4;  // per kind: legacy, per-thread default stream, versions
struct Slot {
  void* original = nullptr;
  unsigned long long flags = 0;
  std::atomic<long> calls{0};
  std::atomic<long> slow{0};
};
Slot g_slots[kKinds][kSlots];

template <int N>
CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                unsigned bz, unsigned shared, CUstream s, void** params, void** extra) {
  Slot& slot = g_slots[kLaunch][N];
  slot.calls.fetch_add(1, std::memory_order_relaxed);
  if (g_check && g_open.load(std::memory_order_relaxed) != 0 && !is_origin(s)) {
    slot.slow.fetch_add(1, std::memory_order_relaxed);
  }
  return reinterpret_cast<LaunchKernelFn>(slot.original)(f, gx, gy, gz, bx, by, bz, shared, s,
                                                         params, extra);
}
template <int N>
CUresult graph_launch(CUgraphExec exec, CUstream s) {
  Slot& slot = g_slots[kGraphLaunch][N];
  slot.calls.fetch_add(1, std::memory_order_relaxed);
  return reinterpret_cast<GraphLaunchFn>(slot.original)(exec, s);
}
template <int N>
CUresult begin(CUstream s, CUstreamCaptureMode mode) {
  Slot& slot = g_slots[kBegin][N];
  slot.calls.fetch_add(1, std::memory_order_relaxed);
  const CUresult r = reinterpret_cast<BeginCaptureFn>(slot.original)(s, mode);
  if (r == CUDA_SUCCESS) {
    for (auto& o : g_origins) {
      CUstream none = nullptr;
      if (o.compare_exchange_strong(none, s)) break;
    }
    g_open.fetch_add(1);
  }
  return r;
}
template <int N>
CUresult end(CUstream s, CUgraph* graph) {
  Slot& slot = g_slots[kEnd][N];
  slot.calls.fetch_add(1, std::memory_order_relaxed);
  const CUresult r = reinterpret_cast<EndCaptureFn>(slot.original)(s, graph);
  for (auto& o : g_origins) {
    CUstream mine = s;
    if (o.compare_exchange_strong(mine, nullptr)) {
      g_open.fetch_sub(1);
      break;
    }
  }
  return r;
}

template <int N>
void* trampoline(Kind kind) {
  switch (kind) {
    case kLaunch: return reinterpret_cast<void*>(&launch<N>);
    case kGraphLaunch: return reinterpret_cast<void*>(&graph_launch<N>);
    case kBegin: return reinterpret_cast<void*>(&begin<N>);
    default: return reinterpret_cast<void*>(&end<N>);
  }
}
void* trampoline_at(int n, Kind kind) {
  switch (n) {
    case 0: return trampoline<0>(kind);
    case 1: return trampoline<1>(kind);
    case 2: return trampoline<2>(kind);
    default: return trampoline<3>(kind);
  }
}

void wrap(const char* symbol, void** pfn, unsigned long long flags) {
  for (int k = 0; k < kKinds; ++k) {
    if (std::strcmp(symbol, kNames[k]) != 0) continue;
    for (int n = 0; n < kSlots; ++n) {
      Slot& slot = g_slots[k][n];
      if (slot.original == *pfn || slot.original == nullptr) {
        slot.original = *pfn;
        slot.flags = flags;
        *pfn = trampoline_at(n, static_cast<Kind>(k));
        return;
      }
    }
  }
}

CUresult get_proc_address(const char* symbol, void** pfn, int version, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* status) {
  const CUresult r = g_real_get_proc_address(symbol, pfn, version, flags, status);
  g_resolved.fetch_add(1, std::memory_order_relaxed);
  if (g_verbose) std::fprintf(stderr, "dlsym-probe: resolve %s v%d flags=%llu -> %d\n", symbol,
                              version, static_cast<unsigned long long>(flags), r);
  // The runtime asks for cuGetProcAddress itself and resolves the rest through that pointer.
  if (r == CUDA_SUCCESS && pfn != nullptr && std::strcmp(symbol, "cuGetProcAddress") == 0 &&
      version >= 12000) {
    *pfn = reinterpret_cast<void*>(&get_proc_address);
    return r;
  }
  if (r == CUDA_SUCCESS && pfn != nullptr && *pfn != nullptr) wrap(symbol, pfn, flags);
  return r;
}

void report() {
  std::fprintf(stderr, "dlsym-probe: dlsym(cuGetProcAddress*) answered %d, symbols resolved %d\n",
               g_dlsym_hits.load(), g_resolved.load());
  for (int k = 0; k < kKinds; ++k) {
    for (auto& slot : g_slots[k]) {
      if (slot.original == nullptr) continue;
      std::fprintf(stderr, "dlsym-probe: %s flags=%llu calls=%ld slow=%ld\n", kNames[k],
                   slot.flags, slot.calls.load(), slot.slow.load());
    }
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void* dlsym(void* handle, const char* name) {
  void* found = real_dlsym()(handle, name);
  if (found != nullptr && name != nullptr && std::strcmp(name, "cuGetProcAddress_v2") == 0) {
    if (g_dlsym_hits.fetch_add(1) == 0) std::atexit(report);
    g_real_get_proc_address = reinterpret_cast<GetProcAddressFn>(found);
    return reinterpret_cast<void*>(&get_proc_address);
  }
  return found;
}
