// What libcapguard.so exports so that a program's launches reach launch_hooks.h without CUPTI:
// `dlsym` (the runtime's way to libcuda's resolver, and JAX's to each driver symbol) and the
// launch entry points of launch_hooks.def (programs linked against libcuda: CuPy, Triton's
// launcher). Loaded by LD_PRELOAD, these come before libcuda's and libc's.
#include <dlfcn.h>

#include "interposer/launch_hooks.h"
#include "interposer/wrapped_slots.h"

namespace hooks = capguard::interposer::launch_hooks;

extern "C" {

// glibc's dlsym, found once (2.34 moved it into libc with a new version).
__attribute__((visibility("hidden"))) void* (*g_capguard_real_dlsym)(void*, const char*) = nullptr;

// Called by the dlsym below with the caller's return address: a replacement, or null for "ask
// glibc". Names the hooks know begin with "cu" and are looked up rarely; anything else returns at
// the first compare.
__attribute__((visibility("hidden"), used)) void* capguard_dlsym_filter(void* handle,
                                                                        const char* name,
                                                                        const void* caller) {
  if (g_capguard_real_dlsym == nullptr) {
    void* real = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    // Before 2.34, the version of the architecture's first glibc.
#if defined(__aarch64__)
    if (real == nullptr) real = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.17");
#else
    if (real == nullptr) real = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
#endif
    g_capguard_real_dlsym = reinterpret_cast<void* (*)(void*, const char*)>(real);
  }
  if (name == nullptr || name[0] != 'c' || name[1] != 'u' || handle == RTLD_NEXT) return nullptr;
  if (capguard::interposer::t_raw_driver_lookup) return nullptr;  // capguard's own lookup
  if (!hooks::enabled()) {
    hooks::note_lookup_before_enable(name);
    return nullptr;
  }
  void* found = g_capguard_real_dlsym(handle, name);
  return found == nullptr ? nullptr : hooks::answer_dlsym(name, found, caller);
}

}  // extern "C"

#if defined(__x86_64__)
// dlsym itself, in assembly: glibc's dlsym reads its own return address to know who asked (what
// RTLD_NEXT is next to), so every lookup capguard does not answer must reach glibc by a jump, with
// the caller's return address still on the stack. A C wrapper's tail call is up to the compiler.
asm(R"(
  .text
  .globl dlsym
  .type dlsym, @function
  .globl capguard_dlsym_entry
  .hidden capguard_dlsym_entry
dlsym:
capguard_dlsym_entry:
  .cfi_startproc
  endbr64
  pushq %rdi
  .cfi_adjust_cfa_offset 8
  pushq %rsi
  .cfi_adjust_cfa_offset 8
  movq 16(%rsp), %rdx
  subq $8, %rsp
  .cfi_adjust_cfa_offset 8
  call capguard_dlsym_filter
  addq $8, %rsp
  .cfi_adjust_cfa_offset -8
  popq %rsi
  .cfi_adjust_cfa_offset -8
  popq %rdi
  .cfi_adjust_cfa_offset -8
  testq %rax, %rax
  jz 1f
  ret
1:
  jmp *g_capguard_real_dlsym(%rip)
  .cfi_endproc
  .size dlsym, .-dlsym
)");
#elif defined(__aarch64__)
// The same on aarch64, where glibc's dlsym reads the link register: the caller's return address
// is x30 at entry, and must be x30 again when the lookup goes on to glibc by a branch (x16, the
// register a BTI landing pad accepts from `br`). `hint #34` is `bti c`, a no-op on cores without
// BTI.
asm(R"(
  .text
  .globl dlsym
  .type dlsym, %function
  .globl capguard_dlsym_entry
  .hidden capguard_dlsym_entry
  .p2align 2
dlsym:
capguard_dlsym_entry:
  .cfi_startproc
  hint #34
  stp x29, x30, [sp, #-32]!
  .cfi_def_cfa_offset 32
  .cfi_offset 29, -32
  .cfi_offset 30, -24
  mov x29, sp
  stp x0, x1, [sp, #16]
  mov x2, x30
  bl capguard_dlsym_filter
  .cfi_remember_state
  cbz x0, 1f
  ldp x29, x30, [sp], #32
  .cfi_def_cfa_offset 0
  .cfi_restore 29
  .cfi_restore 30
  ret
1:
  .cfi_restore_state
  ldp x0, x1, [sp, #16]
  ldp x29, x30, [sp], #32
  .cfi_def_cfa_offset 0
  .cfi_restore 29
  .cfi_restore 30
  adrp x16, g_capguard_real_dlsym
  ldr x16, [x16, :lo12:g_capguard_real_dlsym]
  br x16
  .cfi_endproc
  .size dlsym, .-dlsym
)");
#endif

#if defined(__x86_64__) || defined(__aarch64__)
extern "C" char capguard_dlsym_entry[];

namespace capguard::interposer {
// Whether the program's dlsym is this library's: LD_PRELOAD put it first. Without that (loaded
// only by CUDA_INJECTION64_PATH), the program's launches never reach the hooks.
bool launch_hooks_reach_program() {
  return dlsym(RTLD_DEFAULT, "dlsym") == static_cast<void*>(capguard_dlsym_entry);
}
}  // namespace capguard::interposer
#else
// No dlsym of capguard's on other architectures: launches reach capguard through CUPTI's
// callbacks, as with CAPGUARD_LAUNCH_HOOKS=0.
namespace capguard::interposer {
bool launch_hooks_reach_program() { return false; }
}  // namespace capguard::interposer
#endif

#define CAPGUARD_EXPORT extern "C" __attribute__((visibility("default")))
#define CAPGUARD_GRID_ARGS                                                                    \
  CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
      unsigned shared, CUstream stream, void **params

CAPGUARD_EXPORT CUresult cuLaunchKernel(CAPGUARD_GRID_ARGS, void** extra) {
  return hooks::export_launch_grid(hooks::k_cuLaunchKernel, f, gx, gy, gz, bx, by, bz, shared,
                                   stream, params, extra);
}
CAPGUARD_EXPORT CUresult cuLaunchKernel_ptsz(CAPGUARD_GRID_ARGS, void** extra) {
  return hooks::export_launch_grid(hooks::k_cuLaunchKernel_ptsz, f, gx, gy, gz, bx, by, bz, shared,
                                   stream, params, extra);
}
CAPGUARD_EXPORT CUresult cuLaunchCooperativeKernel(CAPGUARD_GRID_ARGS) {
  return hooks::export_launch_cooperative(hooks::k_cuLaunchCooperativeKernel, f, gx, gy, gz, bx, by,
                                          bz, shared, stream, params);
}
CAPGUARD_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CAPGUARD_GRID_ARGS) {
  return hooks::export_launch_cooperative(hooks::k_cuLaunchCooperativeKernel_ptsz, f, gx, gy, gz,
                                          bx, by, bz, shared, stream, params);
}
CAPGUARD_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params,
                                          void** extra) {
  return hooks::export_launch_config(hooks::k_cuLaunchKernelEx, config, f, params, extra);
}
CAPGUARD_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f,
                                               void** params, void** extra) {
  return hooks::export_launch_config(hooks::k_cuLaunchKernelEx_ptsz, config, f, params, extra);
}
