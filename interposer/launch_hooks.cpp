#include "interposer/launch_hooks.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstring>

#include "interposer/attach_guards.h"
#include "interposer/kernel_launches.h"
#include "interposer/wrapped_slots.h"

namespace capguard::interposer::launch_hooks {
namespace {

using GridFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void**, void**);
using ConfigFn = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
using CooperativeFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, CUstream, void**);
using ResolveV2Fn = CUresult (*)(const char*, void**, int, cuuint64_t,
                                 CUdriverProcAddressQueryResult*);
using ResolveV1Fn = CUresult (*)(const char*, void**, int, cuuint64_t);

enum class Shape { Grid, Config, Cooperative };

struct HookInfo {
  const char* driver_name;
  Shape shape;
  const char* runtime_name;
  uint32_t driver_cbid;
  uint32_t runtime_cbid;
};

constexpr HookInfo kHooks[] = {
#define CAPGUARD_LAUNCH_HOOK(driver, shape, runtime, runtime_cupti)   \
  {#driver, Shape::shape, #runtime, CUPTI_DRIVER_TRACE_CBID_##driver, \
   CUPTI_RUNTIME_TRACE_CBID_##runtime_cupti},
#include "interposer/launch_hooks.def"
};
static_assert(sizeof(kHooks) / sizeof(kHooks[0]) == kHookCount);

constexpr uint32_t kDriverIds[] = {
#define CAPGUARD_LAUNCH_HOOK(driver, shape, runtime, runtime_cupti) \
  CUPTI_DRIVER_TRACE_CBID_##driver,
#include "interposer/launch_hooks.def"
};
constexpr uint32_t kRuntimeIds[] = {
#define CAPGUARD_LAUNCH_HOOK(driver, shape, runtime, runtime_cupti) \
  CUPTI_RUNTIME_TRACE_CBID_##runtime_cupti,
#include "interposer/launch_hooks.def"
};

// One params struct stands for a function and its _ptsz twin: the same members.
static_assert(sizeof(cuLaunchKernel_params) == sizeof(cuLaunchKernel_ptsz_params) &&
              offsetof(cuLaunchKernel_params, hStream) ==
                  offsetof(cuLaunchKernel_ptsz_params, hStream));
static_assert(offsetof(cuLaunchCooperativeKernel_params, hStream) ==
                  offsetof(cuLaunchCooperativeKernel_ptsz_params, hStream) &&
              offsetof(cuLaunchKernelEx_params, config) ==
                  offsetof(cuLaunchKernelEx_ptsz_params, config) &&
              offsetof(cudaLaunchKernelExC_v11060_params, config) ==
                  offsetof(cudaLaunchKernelExC_ptsz_v11060_params, config));
static_assert(offsetof(cudaLaunchKernel_v7000_params, stream) ==
                  offsetof(cudaLaunchKernel_ptsz_v7000_params, stream) &&
              offsetof(cudaLaunchKernel_v7000_params, stream) ==
                  offsetof(cudaLaunchCooperativeKernel_v9000_params, stream) &&
              offsetof(cudaLaunchKernel_v7000_params, stream) ==
                  offsetof(cudaLaunchCooperativeKernel_ptsz_v9000_params, stream));

// Per hook, the entry points handed out wrapped (wrapped_slots.h); the trampolines are below.
template <int H, int N>
struct Trampoline;
WrappedSlots<kHookCount, Trampoline> g_slots;

std::atomic<bool> g_enabled{false};
std::atomic<bool> g_owning{false};
std::atomic<bool> g_delivering{false};
std::atomic<int> g_unwrapped{0};
uint64_t g_self_start = 0, g_self_end = 0;
CUpti_CallbackFunc g_deliver = nullptr;
void* g_deliver_userdata = nullptr;
bool (*g_on_open_origin)(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) = nullptr;

// libcuda's resolvers: the one dlsym found, and the one the runtime got through it.
std::atomic<ResolveV2Fn> g_driver_v2{nullptr}, g_runtime_v2{nullptr};
std::atomic<ResolveV1Fn> g_driver_v1{nullptr}, g_runtime_v1{nullptr};

// Never CUPTI's: a correlation id of a call CUPTI never saw (its ids count up from 1).
uint32_t next_correlation() {
  static thread_local uint32_t count = 0;
  return 0x8000'0000u | (++count & 0x7fff'ffffu);
}

// CUPTI's callback data for a call at ENTER: its name, params, where its result goes.
CUpti_CallbackData callback_data(const char* name, const void* params, void* result,
                                 uint64_t* correlation_data) {
  CUpti_CallbackData data{};
  data.callbackSite = CUPTI_API_ENTER;
  data.functionName = name;
  data.functionParams = params;
  data.functionReturnValue = result;
  data.correlationId = next_correlation();
  data.correlationData = correlation_data;
  return data;
}

// ENTER, the call, EXIT: what CUPTI's callback would have delivered around it.
template <typename Call>
CUresult observe(int hook, bool runtime_named, const void* driver_params,
                 const void* runtime_params, Call call) {
  const HookInfo& h = kHooks[hook];
  CUresult result = CUDA_SUCCESS;  // the driver's code: the capture errors are the runtime's
  uint64_t correlation_data = 0;
  CUpti_CallbackData data =
      callback_data(runtime_named ? h.runtime_name : h.driver_name,
                    runtime_named ? runtime_params : driver_params, &result, &correlation_data);
  const CUpti_CallbackDomain domain =
      runtime_named ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
  const CUpti_CallbackId cbid = runtime_named ? h.runtime_cbid : h.driver_cbid;
  // A capture's body: nothing to deliver unless it fails (then ENTER comes after the call; the
  // recorder's ENTER notes only whether a capture was open, which it still is).
  if (g_on_open_origin != nullptr &&
      g_on_open_origin(g_deliver_userdata, domain, cbid, data.functionParams)) {
    result = call();
    if (result == CUDA_SUCCESS) return result;
    g_deliver(g_deliver_userdata, domain, cbid, &data);
  } else {
    g_deliver(g_deliver_userdata, domain, cbid, &data);
    result = call();
  }
  data.callbackSite = CUPTI_API_EXIT;
  g_deliver(g_deliver_userdata, domain, cbid, &data);
  return result;
}

__attribute__((noinline)) CUresult observe_grid(int hook, bool runtime_named, GridFn real,
                                                CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                                unsigned bx, unsigned by, unsigned bz,
                                                unsigned shared, CUstream stream, void** params,
                                                void** extra) {
  const cuLaunchKernel_params driver{f, gx, gy, gz, bx, by, bz, shared, stream, params, extra};
  const cudaLaunchKernel_v7000_params runtime{nullptr, dim3(gx, gy, gz), dim3(bx, by, bz),
                                              params,  shared,           stream};
  return observe(hook, runtime_named, &driver, &runtime,
                 [&] { return real(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra); });
}

__attribute__((noinline)) CUresult observe_cooperative(int hook, bool runtime_named,
                                                       CooperativeFn real, CUfunction f,
                                                       unsigned gx, unsigned gy, unsigned gz,
                                                       unsigned bx, unsigned by, unsigned bz,
                                                       unsigned shared, CUstream stream,
                                                       void** params) {
  const cuLaunchCooperativeKernel_params driver{f, gx, gy, gz, bx, by, bz, shared, stream, params};
  const cudaLaunchCooperativeKernel_v9000_params runtime{
      nullptr, dim3(gx, gy, gz), dim3(bx, by, bz), params, shared, stream};
  return observe(hook, runtime_named, &driver, &runtime,
                 [&] { return real(f, gx, gy, gz, bx, by, bz, shared, stream, params); });
}

__attribute__((noinline)) CUresult observe_config(int hook, bool runtime_named, ConfigFn real,
                                                  const CUlaunchConfig* config, CUfunction f,
                                                  void** params, void** extra) {
  const cuLaunchKernelEx_params driver{config, f, params, extra};
  cudaLaunchConfig_t runtime_config{};
  if (config != nullptr) {
    runtime_config.gridDim = dim3(config->gridDimX, config->gridDimY, config->gridDimZ);
    runtime_config.blockDim = dim3(config->blockDimX, config->blockDimY, config->blockDimZ);
    runtime_config.dynamicSmemBytes = config->sharedMemBytes;
    runtime_config.stream = config->hStream;
    runtime_config.numAttrs = config->numAttrs;
  }
  const cudaLaunchKernelExC_v11060_params runtime{config != nullptr ? &runtime_config : nullptr,
                                                  nullptr, params};
  return observe(hook, runtime_named, &driver, &runtime,
                 [&] { return real(config, f, params, extra); });
}

// A launch: straight through while the gate is reduced (as CUPTI's switched-off callback was),
// else observed. The trampolines and the exports differ only in where `real` comes from.
inline CUresult launch_grid(int hook, bool runtime_named, GridFn real, CUfunction f, unsigned gx,
                            unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned shared, CUstream stream, void** params, void** extra) {
  kernel_launches::on_launch(f, gx, gy, gz, bx, by, bz, shared, params);
  if (!g_delivering.load(std::memory_order_relaxed)) [[likely]]
    return real(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
  return observe_grid(hook, runtime_named, real, f, gx, gy, gz, bx, by, bz, shared, stream, params,
                      extra);
}

inline CUresult launch_cooperative(int hook, bool runtime_named, CooperativeFn real, CUfunction f,
                                   unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shared, CUstream stream, void** params) {
  kernel_launches::on_launch(f, gx, gy, gz, bx, by, bz, shared, params);
  if (!g_delivering.load(std::memory_order_relaxed)) [[likely]]
    return real(f, gx, gy, gz, bx, by, bz, shared, stream, params);
  return observe_cooperative(hook, runtime_named, real, f, gx, gy, gz, bx, by, bz, shared, stream,
                             params);
}

inline CUresult launch_config(int hook, bool runtime_named, ConfigFn real,
                              const CUlaunchConfig* config, CUfunction f, void** params,
                              void** extra) {
  if (config != nullptr)
    kernel_launches::on_launch(f, config->gridDimX, config->gridDimY, config->gridDimZ,
                               config->blockDimX, config->blockDimY, config->blockDimZ,
                               config->sharedMemBytes, params);
  if (!g_delivering.load(std::memory_order_relaxed)) [[likely]]
    return real(config, f, params, extra);
  return observe_config(hook, runtime_named, real, config, f, params, extra);
}

// The slot's original, stored before its trampoline was handed out.
template <typename Fn, int H, int N>
Fn slot_original() {
  return reinterpret_cast<Fn>(g_slots.at(H, N).original.load(std::memory_order_acquire));
}

template <int H, int N>
CUresult grid_trampoline(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                         unsigned by, unsigned bz, unsigned shared, CUstream stream, void** params,
                         void** extra) {
  return launch_grid(H, g_slots.at(H, N).runtime_named, slot_original<GridFn, H, N>(), f, gx, gy,
                     gz, bx, by, bz, shared, stream, params, extra);
}

template <int H, int N>
CUresult cooperative_trampoline(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                unsigned by, unsigned bz, unsigned shared, CUstream stream,
                                void** params) {
  return launch_cooperative(H, g_slots.at(H, N).runtime_named, slot_original<CooperativeFn, H, N>(),
                            f, gx, gy, gz, bx, by, bz, shared, stream, params);
}

template <int H, int N>
CUresult config_trampoline(const CUlaunchConfig* config, CUfunction f, void** params,
                           void** extra) {
  return launch_config(H, g_slots.at(H, N).runtime_named, slot_original<ConfigFn, H, N>(), config,
                       f, params, extra);
}

template <int H, int N>
struct Trampoline {
  static void* get() {
    switch (kHooks[H].shape) {
      case Shape::Grid:
        return reinterpret_cast<void*>(&grid_trampoline<H, N>);
      case Shape::Config:
        return reinterpret_cast<void*>(&config_trampoline<H, N>);
      case Shape::Cooperative:
        return reinterpret_cast<void*>(&cooperative_trampoline<H, N>);
    }
    return nullptr;
  }
};

int hook_named(const char* name) {
  for (int h = 0; h < kHookCount; ++h) {
    if (std::strcmp(name, kHooks[h].driver_name) == 0) return h;
  }
  return -1;
}

// A launch entry point wrapped, or itself when every slot is taken (counted: then the hooks do
// not take the launches from CUPTI).
void* wrap(int hook, void* original, bool runtime_named) {
  if (void* trampoline = g_slots.wrap(hook, original, runtime_named)) return trampoline;
  g_unwrapped.fetch_add(1, std::memory_order_relaxed);
  return original;
}

bool in_self(const void* address) {
  const auto a = reinterpret_cast<uint64_t>(address);
  return a >= g_self_start && a < g_self_end;
}

template <bool RuntimeNamed>
CUresult resolve_v1(const char*, void**, int, cuuint64_t);
template <bool RuntimeNamed>
CUresult resolve_v2(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

// What a resolver hands out for `symbol`: the runtime's second resolver when it asks for
// cuGetProcAddress itself (its version picks the signature: 12000 on, _v2's), a trampoline for
// a launch entry point (its per-thread twin under CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM).
void* resolved(const char* symbol, void* found, int version, cuuint64_t flags, bool runtime_named) {
  if (std::strcmp(symbol, "cuGetProcAddress") == 0) {
    if (version >= 12000) {
      g_runtime_v2.store(reinterpret_cast<ResolveV2Fn>(found), std::memory_order_release);
      return reinterpret_cast<void*>(&resolve_v2<true>);
    }
    g_runtime_v1.store(reinterpret_cast<ResolveV1Fn>(found), std::memory_order_release);
    return reinterpret_cast<void*>(&resolve_v1<true>);
  }
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  if (symbol[0] != 'c' || symbol[1] != 'u' || symbol[2] != 'L') {
    void* guarded = attach_guards::wrap_resolved(symbol, found, per_thread, runtime_named);
    return guarded != nullptr ? guarded : found;
  }
  int hook = -1;
  if (per_thread) {
    char twin[64];
    if (std::strlen(symbol) + 6 < sizeof twin) {
      std::strcpy(twin, symbol);
      std::strcat(twin, "_ptsz");
      hook = hook_named(twin);
    }
  }
  if (hook < 0) hook = hook_named(symbol);
  return hook < 0 ? found : wrap(hook, found, runtime_named);
}

template <bool RuntimeNamed>
CUresult resolve_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                    CUdriverProcAddressQueryResult* status) {
  const ResolveV2Fn real = (RuntimeNamed ? g_runtime_v2 : g_driver_v2).load();
  const CUresult r = real(symbol, pfn, version, flags, status);
  if (r == CUDA_SUCCESS && symbol != nullptr && pfn != nullptr && *pfn != nullptr) {
    *pfn = resolved(symbol, *pfn, version, flags, RuntimeNamed);
  }
  return r;
}

template <bool RuntimeNamed>
CUresult resolve_v1(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  const ResolveV1Fn real = (RuntimeNamed ? g_runtime_v1 : g_driver_v1).load();
  const CUresult r = real(symbol, pfn, version, flags);
  if (r == CUDA_SUCCESS && symbol != nullptr && pfn != nullptr && *pfn != nullptr) {
    *pfn = resolved(symbol, *pfn, version, flags, RuntimeNamed);
  }
  return r;
}

void* export_original(int hook) { return g_slots.export_original(hook, kHooks[hook].driver_name); }

}  // namespace

void enable(uint64_t self_start, uint64_t self_end) {
  g_self_start = self_start;
  g_self_end = self_end;
  g_enabled.store(true, std::memory_order_release);
}

bool enabled() { return g_enabled.load(std::memory_order_acquire); }

void* answer_dlsym(const char* name, void* found, const void* caller) {
  if (!enabled() || found == nullptr || in_self(caller) || in_self(found)) return nullptr;
  // CUPTI's own driver calls are not the program's.
  Dl_info info;
  if (dladdr(caller, &info) != 0 && info.dli_fname != nullptr &&
      std::strstr(info.dli_fname, "libcupti") != nullptr) {
    return nullptr;
  }
  if (std::strcmp(name, "cuGetProcAddress_v2") == 0) {
    g_driver_v2.store(reinterpret_cast<ResolveV2Fn>(found), std::memory_order_release);
    return reinterpret_cast<void*>(&resolve_v2<false>);
  }
  if (std::strcmp(name, "cuGetProcAddress") == 0) {
    g_driver_v1.store(reinterpret_cast<ResolveV1Fn>(found), std::memory_order_release);
    return reinterpret_cast<void*>(&resolve_v1<false>);
  }
  const int hook = hook_named(name);
  if (hook < 0) return attach_guards::wrap_exported_name(name, found);
  return wrap(hook, found, false);
}

void deliver_to(CUpti_CallbackFunc deliver, void* userdata,
                bool (*on_open_origin)(void*, CUpti_CallbackDomain, CUpti_CallbackId,
                                       const void*)) {
  g_deliver_userdata = userdata;
  g_on_open_origin = on_open_origin;
  g_deliver = deliver;
}

std::atomic<bool>& delivering() { return g_delivering; }

void deliver_made_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name,
                       const void* params, int32_t result) {
  if (g_deliver == nullptr) return;
  uint64_t correlation_data = 0;
  CUpti_CallbackData data = callback_data(name, params, &result, &correlation_data);
  g_deliver(g_deliver_userdata, domain, cbid, &data);
  data.callbackSite = CUPTI_API_EXIT;
  g_deliver(g_deliver_userdata, domain, cbid, &data);
}

void set_owning(bool owning) {
  g_owning.store(owning && g_deliver != nullptr, std::memory_order_release);
  if (!owning) g_delivering.store(false, std::memory_order_release);
}

bool owns(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (!g_owning.load(std::memory_order_relaxed)) return false;
  const uint32_t* ids = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? kRuntimeIds : kDriverIds;
  for (int h = 0; h < kHookCount; ++h) {
    if (ids[h] == cbid) return true;
  }
  return false;
}

const uint32_t* runtime_callback_ids(size_t& count) {
  count = kHookCount;
  return kRuntimeIds;
}
const uint32_t* driver_callback_ids(size_t& count) {
  count = kHookCount;
  return kDriverIds;
}

void note_lookup_before_enable(const char* name) {
  if (std::strncmp(name, "cuGetProcAddress", 16) == 0 || hook_named(name) >= 0) {
    g_unwrapped.fetch_add(1, std::memory_order_relaxed);
  }
  if (std::strncmp(name, "cuGetProcAddress", 16) == 0 || attach_guards::names_guard(name)) {
    attach_guards::note_unwrapped();
  }
}

int unwrapped() { return g_unwrapped.load(std::memory_order_relaxed); }

CUresult export_launch_grid(int hook, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                            unsigned bx, unsigned by, unsigned bz, unsigned shared, CUstream stream,
                            void** params, void** extra) {
  const auto real = reinterpret_cast<GridFn>(export_original(hook));
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return launch_grid(hook, false, real, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}

CUresult export_launch_config(int hook, const CUlaunchConfig* config, CUfunction f, void** params,
                              void** extra) {
  const auto real = reinterpret_cast<ConfigFn>(export_original(hook));
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return launch_config(hook, false, real, config, f, params, extra);
}

CUresult export_launch_cooperative(int hook, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                   unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                   CUstream stream, void** params) {
  const auto real = reinterpret_cast<CooperativeFn>(export_original(hook));
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return launch_cooperative(hook, false, real, f, gx, gy, gz, bx, by, bz, shared, stream, params);
}

}  // namespace capguard::interposer::launch_hooks
