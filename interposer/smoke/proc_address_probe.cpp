// Measurement probe for CUPTI's cost (not part of capguard): which driver entry points does the
// runtime resolve through cuGetProcAddress after CUPTI is attached, and what does a launch cost
// when its pointer is wrapped instead of called back? An injection library:
//   CUDA_INJECTION64_PATH=proc_address_probe.so PROBE_MODE=<mode> ./bench ...
// modes: zero (subscribed, no callback enabled), unsubscribed / finalized (subscribed, then
// unsubscribed, then cuptiFinalize), none (subscribed, only cuGetProcAddress's EXIT enabled), wrap (the same, plus the
// launch pointers it hands out wrapped by a counting trampoline), runtime / driver / all (that
// callback domain on, launch pointers wrapped too). At exit it prints what it saw on stderr.
#include <cuda.h>
#include <cupti.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

std::atomic<int> g_resolved{0};
std::atomic<int> g_resolved_before_seen{0};
bool g_wrap = false;
bool g_verbose = false;

// One slot per wrapped entry point (legacy and per-thread default stream variants differ).
using LaunchKernelFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, unsigned, CUstream, void**, void**);
using LaunchKernelExFn = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);

struct Slot {
  const char* name;
  unsigned long long flags;
  void* original;
  std::atomic<long> calls;
};
Slot g_slots[8] = {};
std::atomic<int> g_slot_count{0};

template <int N>
CUresult wrapped_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, CUstream s, void** params,
                        void** extra) {
  g_slots[N].calls.fetch_add(1, std::memory_order_relaxed);
  return reinterpret_cast<LaunchKernelFn>(g_slots[N].original)(f, gx, gy, gz, bx, by, bz, shared,
                                                               s, params, extra);
}
template <int N>
CUresult wrapped_launch_ex(const CUlaunchConfig* config, CUfunction f, void** params,
                           void** extra) {
  g_slots[N].calls.fetch_add(1, std::memory_order_relaxed);
  return reinterpret_cast<LaunchKernelExFn>(g_slots[N].original)(config, f, params, extra);
}

template <int N>
void* wrapper_for(bool ex) {
  return ex ? reinterpret_cast<void*>(&wrapped_launch_ex<N>)
            : reinterpret_cast<void*>(&wrapped_launch<N>);
}
void* wrapper_at(int n, bool ex) {
  switch (n) {
    case 0: return wrapper_for<0>(ex);
    case 1: return wrapper_for<1>(ex);
    case 2: return wrapper_for<2>(ex);
    case 3: return wrapper_for<3>(ex);
    case 4: return wrapper_for<4>(ex);
    case 5: return wrapper_for<5>(ex);
    case 6: return wrapper_for<6>(ex);
    default: return wrapper_for<7>(ex);
  }
}

void on_proc_address(const cuGetProcAddress_v2_params* p, CUresult result) {
  g_resolved.fetch_add(1);
  if (g_verbose) {
    std::fprintf(stderr, "probe: resolve %s flags=%llu version=%d -> %d\n", p->symbol,
                 static_cast<unsigned long long>(p->flags), p->cudaVersion, result);
  }
  if (!g_wrap || result != CUDA_SUCCESS || p->pfn == nullptr || *p->pfn == nullptr) return;
  const bool plain = std::strcmp(p->symbol, "cuLaunchKernel") == 0;
  const bool ex = std::strcmp(p->symbol, "cuLaunchKernelEx") == 0;
  if (!plain && !ex) return;
  for (int i = 0; i < g_slot_count.load(); ++i) {
    if (g_slots[i].original == *p->pfn) {
      *p->pfn = wrapper_at(i, ex);
      return;
    }
  }
  const int n = g_slot_count.fetch_add(1);
  if (n >= 8) return;
  g_slots[n].name = plain ? "cuLaunchKernel" : "cuLaunchKernelEx";
  g_slots[n].flags = p->flags;
  g_slots[n].original = *p->pfn;
  *p->pfn = wrapper_at(n, ex);
}

void CUPTIAPI callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                       const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* d = static_cast<const CUpti_CallbackData*>(data);
  if (d->callbackSite != CUPTI_API_EXIT) return;
  if (cbid == CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2) {
    on_proc_address(static_cast<const cuGetProcAddress_v2_params*>(d->functionParams),
                    *static_cast<const CUresult*>(d->functionReturnValue));
  }
}

void report() {
  std::fprintf(stderr, "probe: mode=%s resolved-after-attach=%d\n",
               std::getenv("PROBE_MODE") ? std::getenv("PROBE_MODE") : "none", g_resolved.load());
  for (int i = 0; i < g_slot_count.load() && i < 8; ++i) {
    std::fprintf(stderr, "probe: wrapped %s flags=%llu calls=%ld\n", g_slots[i].name,
                 g_slots[i].flags, g_slots[i].calls.load());
  }
}

}  // namespace

extern "C" int InitializeInjection(void) {
  const char* mode = std::getenv("PROBE_MODE");
  if (mode == nullptr) mode = "none";
  g_verbose = std::getenv("PROBE_VERBOSE") != nullptr;
  g_wrap = std::strcmp(mode, "none") != 0;
  CUpti_SubscriberHandle subscriber;
  if (cuptiSubscribe(&subscriber, &callback, nullptr) != CUPTI_SUCCESS) return 1;
  // zero: subscribed, nothing enabled; unsubscribed: subscribed once, then let go; finalized:
  // the same, then cuptiFinalize (what a tool that stops watching leaves behind).
  if (std::strcmp(mode, "zero") == 0) return 1;
  if (std::strcmp(mode, "unsubscribed") == 0 || std::strcmp(mode, "finalized") == 0) {
    cuptiUnsubscribe(subscriber);
    if (std::strcmp(mode, "finalized") == 0) cuptiFinalize();
    return 1;
  }
  cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                      CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2);
  cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                      CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress);
  if (std::strcmp(mode, "runtime") == 0 || std::strcmp(mode, "all") == 0) {
    cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  }
  if (std::strcmp(mode, "driver") == 0 || std::strcmp(mode, "all") == 0) {
    cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  }
  std::atexit(report);
  return 1;
}
