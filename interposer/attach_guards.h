// The driver entry points that keep CUPTI's absence safe (idle_detach.h): while
// CUPTI is detached, a call the reduced set would have recorded must find it attached again,
// a failed synchronize must still be delivered, and graph launches say that the program is
// still running without needing CUPTI. attach_guards.def lists them, and they reach the program
// by the ways launch_hooks.h describes (the runtime's resolver, dlsym, libcapguard.so's exports),
// wrapped in one trampoline shape: six integer registers in, one out, which forwards any of
// them unchanged (none takes more, or a float, or a struct by value).
//
// The hot path is the guards' own: an Attach call while attached costs two atomic adds; a sync
// and a graph launch a relaxed load. No lock and no allocation; nothing here judges a call.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace capguard::interposer::attach_guards {

enum Guard : int {
#define CAPGUARD_ATTACH_GUARD(exported, resolver, per_thread) k_##exported,
#define CAPGUARD_SYNC_GUARD(exported, resolver, per_thread, runtime, runtime_cupti) k_##exported,
#define CAPGUARD_HEARTBEAT_GUARD(exported, resolver, per_thread) k_##exported,
#include "interposer/attach_guards.def"
  kGuardCount
};

enum class Role : uint8_t { Attach, Sync, Heartbeat };
Role role_of(int guard);
const char* exported_name(int guard);

// CUPTI's state as the guards see it. Attached is the only state in which an Attach call goes
// straight through; idle_detach.cpp moves between them.
enum class State : int { Attached, Detaching, Detached };

// What the guards call back (idle_detach.cpp sets them before CUPTI can detach):
// - attach: an Attach call found CUPTI detached. Returns once attached again (or when that
//   failed: the call then goes through regardless).
// - heartbeat: every `period`-th graph launch of a thread.
// - sync_failed: a synchronize failed while detached: deliver it as CUPTI would have,
//   runtime-named where the runtime made it, without attaching (after a sticky error CUPTI
//   cannot attach: measured on the H100). `arg`: its first argument (stream, event or context),
//   `result` what it returned.
struct Listener {
  void (*attach)() = nullptr;
  void (*heartbeat)() = nullptr;
  void (*sync_failed)(int guard, bool runtime_named, uintptr_t arg, int result) = nullptr;
  uint32_t period = 64;
};
void listen(const Listener& listener);

std::atomic<State>& state();
// Attach calls in progress while attached: the detacher waits for none.
int in_flight();
// The calling thread's own driver calls (detaching, attaching) go straight through.
void set_bypass(bool bypass);

// From launch_hooks.cpp's resolvers and dlsym: the trampoline for `symbol` (`per_thread`: asked
// with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM), or null when it is not a guard's.
void* wrap_resolved(const char* symbol, void* found, bool per_thread, bool runtime_named);
void* wrap_exported_name(const char* name, void* found);
// A name of a guard looked up before capguard's constructor ran (counted in unwrapped()).
bool names_guard(const char* name);
void note_unwrapped();
// Guards that reached the program unwrapped: CUPTI must then never detach.
int unwrapped();
// Whether any guard was handed out at all (the runtime resolved its table through capguard).
bool any_wrapped();

// libcapguard.so's exports (guard_exports.cpp).
uintptr_t export_call(int guard, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d, uintptr_t e,
                      uintptr_t f);

// The unit tests: forget every slot and callback.
void reset_for_tests();

}  // namespace capguard::interposer::attach_guards
