// CUPTI detached while the program needs none of it. Attached, CUPTI costs a graph
// replay about 7% even with no callback on (measured on the H100 and H200: 20 empty kernels a
// replay; only cuptiFinalize gives the time back). So once the callback gate has been reduced
// for a while, nothing the reduced set records has happened for `idle` and only one thread has
// been replaying graphs, capguard finalizes CUPTI; the first call that the reduced set records
// (attach_guards.def: a capture, a stream or event made or destroyed, an instantiate, an
// allocation or free, ...) subscribes again before it proceeds (about 14 ms, measured), and so
// is recorded as before. A synchronize that fails while detached (a replay's sticky error) is
// delivered by the guard itself: CUPTI cannot attach in a context with a sticky error, nor is
// there anything left to see there.
//
// Never while any of these holds (`why_not`, composed by injection.cpp): a capture or
// rehearsal is open or lingering (the gate is full), the graph watch wants launches or syncs
// after a recorded launch, the program has its own CUPTI client, a guarded entry point reached
// the program unwrapped (then a call could come unseen), the CUPTI is older than 13 (teardown
// with graphs crashed before 12.6), CAPGUARD_CALLBACKS=all, or CAPGUARD_DETACH_IDLE_MS=off.
#pragma once

#include <cstdint>

namespace capguard::interposer::idle_detach {

struct Config {
  // CAPGUARD_DETACH_IDLE_MS: the first quiet time asked (0: at the first quiet heartbeat); it
  // doubles after each detach that ended soon (idle_detach.cpp). Short, because what a detach
  // costs a replay loop grows with how late it comes: the detach stalls the replaying thread
  // while the GPU runs dry (3.6-4.6 ms at 18 ms into a loop of empty kernels, 9.7-14.6 ms at
  // 58 ms: docs/performance.md), and every replay until then pays the attached rate.
  uint64_t idle_ns = 5'000'000;
  // Null when CUPTI may detach now, else why not, in words (said at exit with CAPGUARD_DETACH_LOG
  // when CUPTI never detached).
  const char* (*why_not)() = nullptr;
  // Grows whenever the program needed CUPTI (the recorder's count of records written): a window
  // is quiet while it stays the same.
  uint64_t (*activity)() = nullptr;
  bool (*detach)() = nullptr;  // unsubscribe and finalize: true when CUPTI is gone
  bool (*attach)() = nullptr;  // subscribe and enable the reduced set: true when attached
  // A failed synchronize while detached (attach_guards.h).
  void (*sync_failed)(int guard, bool runtime_named, uintptr_t arg, int result) = nullptr;
  uint64_t (*clock)() = nullptr;      // monotonic ns (null: CLOCK_MONOTONIC_COARSE)
  uint32_t (*thread_id)() = nullptr;  // (null: gettid)
  bool log = false;                   // CAPGUARD_DETACH_LOG=1: a line on stderr per change
};

// Reads CAPGUARD_DETACH_IDLE_MS into `config`; false when it says off.
bool configure_from_environment(Config& config);
// Installs the guards' listener: from here on CUPTI may detach.
void start(const Config& config);

// Attached again now, if detached (a CUPTI client of the program arrives).
void ensure_attached();

// At process exit: with CAPGUARD_DETACH_LOG, why CUPTI never detached, if it did not.
void say_at_exit();

uint64_t detaches();
uint64_t attaches();

// The guards' callbacks, for the unit tests.
void on_heartbeat();
void on_attach_needed();
void reset_for_tests();

}  // namespace capguard::interposer::idle_detach
