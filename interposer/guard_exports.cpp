// libcapguard.so's definitions of the driver entry points of attach_guards.def, for programs
// linked against libcuda (CuPy, Triton's launcher): preloaded, these are the ones their calls
// bind to. Each forwards its six argument registers (attach_guards.h says why that suffices).
// cuda.h is not included: its prototypes of the same names have other types.
#include <cstdint>

#include "interposer/attach_guards.h"

namespace guards = capguard::interposer::attach_guards;

#define CAPGUARD_GUARD_EXPORT(exported)                                               \
  extern "C" __attribute__((visibility("default"))) uintptr_t exported(               \
      uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d, uintptr_t e, uintptr_t f) { \
    return guards::export_call(guards::k_##exported, a, b, c, d, e, f);               \
  }
#define CAPGUARD_ATTACH_GUARD(exported, resolver, per_thread) CAPGUARD_GUARD_EXPORT(exported)
#define CAPGUARD_SYNC_GUARD(exported, resolver, per_thread, runtime, runtime_cupti) \
  CAPGUARD_GUARD_EXPORT(exported)
#define CAPGUARD_HEARTBEAT_GUARD(exported, resolver, per_thread) CAPGUARD_GUARD_EXPORT(exported)
#include "interposer/attach_guards.def"
