#include "interposer/attach_guards.h"

#include <cuda.h>

#include <cstring>
#include <type_traits>

#include "interposer/kernel_launches.h"
#include "interposer/wrapped_slots.h"

namespace capguard::interposer::attach_guards {
namespace {

// Six integer registers in, one out: what the x86-64 System V ABI (rdi..r9, rax) and AAPCS64
// (x0..x5, x0) pass and return for every guarded function (at most six integer or pointer
// arguments, an integer result), so a call made through this type hands each of them its own
// arguments unchanged. Neither ABI defines the bits above a narrower argument or result, and
// both leave them to be ignored: a result is read as its 32 bits only (call_sync).
using Forward = uintptr_t (*)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);

template <typename T>
constexpr bool kRegisterArgument =
    std::is_integral_v<T> || std::is_pointer_v<T> || std::is_enum_v<T>;
template <typename R, typename... A>
constexpr bool forwards(R (*)(A...)) {
  return sizeof...(A) <= 6 && (kRegisterArgument<A> && ...) && kRegisterArgument<R>;
}
// cuda.h's prototypes of the current ABI (the older ones have fewer or the same arguments).
static_assert(forwards(&::cuStreamBeginCapture) && forwards(&::cuStreamBeginCaptureToGraph) &&
              forwards(&::cuStreamEndCapture) && forwards(&::cuThreadExchangeStreamCaptureMode) &&
              forwards(&::cuStreamCreate) && forwards(&::cuStreamCreateWithPriority) &&
              forwards(&::cuStreamDestroy) && forwards(&::cuEventCreate) &&
              forwards(&::cuEventDestroy) && forwards(&::cuGraphInstantiate) &&
              forwards(&::cuGraphInstantiateWithFlags) &&
              forwards(&::cuGraphInstantiateWithParams) && forwards(&::cuGraphExecUpdate) &&
              forwards(&::cuGraphExecDestroy) && forwards(&::cuGraphExecKernelNodeSetParams) &&
              forwards(&::cuGraphExecMemcpyNodeSetParams) &&
              forwards(&::cuGraphExecMemsetNodeSetParams) &&
              forwards(&::cuGraphExecChildGraphNodeSetParams) &&
              forwards(&::cuGraphExecNodeSetParams) && forwards(&::cuMemAlloc) &&
              forwards(&::cuMemAllocPitch) && forwards(&::cuMemAllocManaged) &&
              forwards(&::cuMemAllocAsync) && forwards(&::cuMemAllocFromPoolAsync) &&
              forwards(&::cuMemMap) && forwards(&::cuMemUnmap) && forwards(&::cuMemAllocHost) &&
              forwards(&::cuMemHostAlloc) && forwards(&::cuMemHostRegister) &&
              forwards(&::cuMemFree) && forwards(&::cuMemFreeAsync) && forwards(&::cuMemFreeHost) &&
              forwards(&::cuMemHostUnregister) && forwards(&::cuStreamSynchronize) &&
              forwards(&::cuCtxSynchronize) && forwards(&::cuCtxSynchronize_v2) &&
              forwards(&::cuEventSynchronize) && forwards(&::cuGraphLaunch));

struct GuardInfo {
  const char* exported;
  const char* resolver;
  bool per_thread;
  Role role;
};

constexpr GuardInfo kGuards[] = {
#define CAPGUARD_ATTACH_GUARD(exported, resolver, per_thread) \
  {#exported, #resolver, per_thread != 0, Role::Attach},
#define CAPGUARD_SYNC_GUARD(exported, resolver, per_thread, runtime, runtime_cupti) \
  {#exported, #resolver, per_thread != 0, Role::Sync},
#define CAPGUARD_HEARTBEAT_GUARD(exported, resolver, per_thread) \
  {#exported, #resolver, per_thread != 0, Role::Heartbeat},
#include "interposer/attach_guards.def"
};
static_assert(sizeof(kGuards) / sizeof(kGuards[0]) == kGuardCount);

// Per guard, the entry points handed out wrapped (wrapped_slots.h); the trampolines are below.
template <int G, int N>
struct Trampoline;
WrappedSlots<kGuardCount, Trampoline> g_slots;

std::atomic<State> g_state{State::Attached};
std::atomic<int> g_in_flight{0};
std::atomic<int> g_unwrapped{0};
std::atomic<bool> g_any_wrapped{false};
Listener g_listener;
thread_local bool t_bypass = false;
thread_local uint32_t t_countdown = 0;

// An Attach call: counted in flight while CUPTI is attached, so that the detacher waits for it;
// found detached, attached again first.
__attribute__((noinline)) uintptr_t attach_then_call(Forward real, uintptr_t a, uintptr_t b,
                                                     uintptr_t c, uintptr_t d, uintptr_t e,
                                                     uintptr_t f) {
  for (;;) {
    g_in_flight.fetch_sub(1, std::memory_order_seq_cst);
    if (g_listener.attach != nullptr) g_listener.attach();
    if (g_state.load(std::memory_order_seq_cst) != State::Attached) return real(a, b, c, d, e, f);
    g_in_flight.fetch_add(1, std::memory_order_seq_cst);
    if (g_state.load(std::memory_order_seq_cst) == State::Attached) break;
  }
  const uintptr_t result = real(a, b, c, d, e, f);
  g_in_flight.fetch_sub(1, std::memory_order_release);
  return result;
}

inline uintptr_t call_attached(Forward real, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d,
                               uintptr_t e, uintptr_t f) {
  if (t_bypass) return real(a, b, c, d, e, f);
  // seq_cst against the detacher's store of Detaching and its read of the count.
  g_in_flight.fetch_add(1, std::memory_order_seq_cst);
  if (g_state.load(std::memory_order_seq_cst) != State::Attached) [[unlikely]]
    return attach_then_call(real, a, b, c, d, e, f);
  const uintptr_t result = real(a, b, c, d, e, f);
  g_in_flight.fetch_sub(1, std::memory_order_release);
  return result;
}

inline uintptr_t call_sync(int guard, bool runtime_named, Forward real, uintptr_t a, uintptr_t b,
                           uintptr_t c, uintptr_t d, uintptr_t e, uintptr_t f) {
  const uintptr_t result = real(a, b, c, d, e, f);
  // CUresult is 32 bits: the upper half of rax (x0) is not the callee's to define.
  const int code = static_cast<int>(static_cast<uint32_t>(result));
  if (code != 0 && g_state.load(std::memory_order_acquire) != State::Attached && !t_bypass &&
      g_listener.sync_failed != nullptr) [[unlikely]] {
    g_listener.sync_failed(guard, runtime_named, a, code);
  }
  return result;
}

inline uintptr_t call_heartbeat(Forward real, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d,
                                uintptr_t e, uintptr_t f) {
  const uintptr_t result = real(a, b, c, d, e, f);
  // Graph coverage: cuGraphLaunch(exec, stream); a launch that failed ran nothing.
  if (static_cast<uint32_t>(result) == 0 && !t_bypass) kernel_launches::on_graph_launch(a);
  if (t_countdown-- == 0) [[unlikely]] {
    t_countdown = g_listener.period;
    if (g_listener.heartbeat != nullptr && !t_bypass) g_listener.heartbeat();
  }
  return result;
}

inline uintptr_t call(int guard, bool runtime_named, Forward real, uintptr_t a, uintptr_t b,
                      uintptr_t c, uintptr_t d, uintptr_t e, uintptr_t f) {
  switch (kGuards[guard].role) {
    case Role::Attach:
      return call_attached(real, a, b, c, d, e, f);
    case Role::Sync:
      return call_sync(guard, runtime_named, real, a, b, c, d, e, f);
    case Role::Heartbeat:
      return call_heartbeat(real, a, b, c, d, e, f);
  }
  return real(a, b, c, d, e, f);
}

template <int G, int N>
uintptr_t trampoline(uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d, uintptr_t e, uintptr_t f) {
  const auto& slot = g_slots.at(G, N);
  return call(G, slot.runtime_named,
              reinterpret_cast<Forward>(slot.original.load(std::memory_order_acquire)), a, b, c, d,
              e, f);
}

template <int G, int N>
struct Trampoline {
  static void* get() { return reinterpret_cast<void*>(&trampoline<G, N>); }
};

// The guard's trampoline for `original`, or `original` itself when every slot is taken
// (counted: CUPTI then never detaches).
void* wrap(int guard, void* original, bool runtime_named) {
  void* trampoline = g_slots.wrap(guard, original, runtime_named);
  if (trampoline == nullptr) {
    note_unwrapped();
    return original;
  }
  g_any_wrapped.store(true, std::memory_order_release);
  return trampoline;
}

void* export_original(int guard) { return g_slots.export_original(guard, kGuards[guard].exported); }

}  // namespace

Role role_of(int guard) { return kGuards[guard].role; }
const char* exported_name(int guard) { return kGuards[guard].exported; }

void listen(const Listener& listener) {
  g_listener = listener;
  if (g_listener.period == 0) g_listener.period = 1;
}

std::atomic<State>& state() { return g_state; }
int in_flight() { return g_in_flight.load(std::memory_order_seq_cst); }
void set_bypass(bool bypass) { t_bypass = bypass; }

void* wrap_resolved(const char* symbol, void* found, bool per_thread, bool runtime_named) {
  if (symbol[0] != 'c' || symbol[1] != 'u') return nullptr;
  int legacy = -1;
  for (int g = 0; g < kGuardCount; ++g) {
    if (std::strcmp(symbol, kGuards[g].resolver) != 0) continue;
    if (kGuards[g].per_thread == per_thread) return wrap(g, found, runtime_named);
    if (!kGuards[g].per_thread && legacy < 0) legacy = g;
  }
  // Asked per-thread for a function without a twin (it takes no stream): the one there is.
  return legacy < 0 ? nullptr : wrap(legacy, found, runtime_named);
}

void* wrap_exported_name(const char* name, void* found) {
  for (int g = 0; g < kGuardCount; ++g) {
    if (std::strcmp(name, kGuards[g].exported) == 0) return wrap(g, found, false);
  }
  return nullptr;
}

bool names_guard(const char* name) {
  for (const GuardInfo& guard : kGuards) {
    if (std::strcmp(name, guard.exported) == 0 || std::strcmp(name, guard.resolver) == 0)
      return true;
  }
  return false;
}

void note_unwrapped() { g_unwrapped.fetch_add(1, std::memory_order_relaxed); }
int unwrapped() { return g_unwrapped.load(std::memory_order_relaxed); }
bool any_wrapped() { return g_any_wrapped.load(std::memory_order_acquire); }

uintptr_t export_call(int guard, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d, uintptr_t e,
                      uintptr_t f) {
  const auto real = reinterpret_cast<Forward>(export_original(guard));
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return call(guard, false, real, a, b, c, d, e, f);
}

void reset_for_tests() {
  g_slots.reset_for_tests();
  g_state.store(State::Attached);
  g_in_flight.store(0);
  g_unwrapped.store(0);
  g_any_wrapped.store(false);
  g_listener = Listener{};
  t_bypass = false;
  t_countdown = 0;
}

}  // namespace capguard::interposer::attach_guards
