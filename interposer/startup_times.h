// Opt-in start-up timing: where a process's start-up and recording time goes under
// capguard. With CAPGUARD_STARTUP_TIMES=1 the interposer stamps CLOCK_MONOTONIC at each start-up
// phase boundary (the first time it is reached) into a fixed static table, sums the time spent
// in a few kinds of work (capguard's CUPTI callbacks, module scans, stack unwinding, Python
// frames, graph walks), and writes the table once, at process exit, to
// `$CAPGUARD_TRACE_DIR/capguard.<pid>.startup`. The trace itself is not changed.
//
// Without the variable every hook is one load of a flag and a branch predicted not taken:
// nothing is read from the clock and nothing is written. Enabled, a hook takes one or two clock
// reads and a relaxed atomic add; it never allocates, locks or throws.
//
// The file's lines (docs/performance.md, bench/startup.py reads them):
//   # capguard startup times, pid <pid>, CLOCK_MONOTONIC nanoseconds
//   point <phase> <absolute CLOCK_MONOTONIC ns>     (phases reached, in the order of Phase)
//   sum <kind> <total ns> <count>                    (every kind, reached or not)
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace capguard::interposer::startup {

#define CAPGUARD_STARTUP_PHASES(X)                                                             \
  X(process_start)     /* /proc/self/stat starttime: clock ticks, 10 ms resolution */          \
  X(constructor)       /* libcapguard.so's constructor begins */                               \
  X(constructor_done)  /* ... and ends (CUDA not touched) */                                   \
  X(injection_entry)   /* cuInit called InitializeInjection */                                 \
  X(init_begin)        /* capguard starts to attach (injection, or the program's own CUPTI) */ \
  X(driver_symbols)    /* libcuda's entry points looked up */                                  \
  X(trace_opened)      /* capguard.<pid>.trace created */                                      \
  X(preamble_written)  /* command line and module map written */                               \
  X(cupti_loaded)      /* dlopen of libcupti returned */                                       \
  X(subscribed)        /* cuptiSubscribe(_v2) returned */                                      \
  X(callbacks_enabled) /* the gate's reduced set is on */                                      \
  X(init_done)         /* attach finished, 'a' record written */                               \
  X(first_callback)    /* the first CUPTI callback reaches capguard */                         \
  X(first_record)      /* the first API event written */                                       \
  X(first_capture)     /* the first BeginCapture's ENTER */                                    \
  X(fork_child)        /* a fork child: its phases and sums start again here */                \
  X(exit)              /* the process's exit handler */

#define CAPGUARD_STARTUP_SUMS(X)                                                         \
  X(callbacks)     /* inside capguard's CUPTI callback (outermost only), everything */   \
  X(module_scan)   /* writing the module map: dl_iterate_phdr, build-ids, 'm' records */ \
  X(stack_unwind)  /* native stacks of recorded calls */                                 \
  X(python_frames) /* Python frames of recorded calls (the first looks CPython up) */    \
  X(graph_walk)    /* walking instantiated graphs */                                     \
  X(cupti_enable)  /* capguard's cuptiEnableDomain/cuptiEnableCallback calls (the gate) */

enum class Phase : uint8_t {
#define CAPGUARD_X(name) name,
  CAPGUARD_STARTUP_PHASES(CAPGUARD_X)
#undef CAPGUARD_X
      count
};
enum class Sum : uint8_t {
#define CAPGUARD_X(name) name,
  CAPGUARD_STARTUP_SUMS(CAPGUARD_X)
#undef CAPGUARD_X
      count
};

namespace detail {
extern std::atomic<bool> g_enabled;
uint64_t now_ns();
void mark_slow(Phase phase, uint64_t ns);
void add_slow(Sum sum, uint64_t ns);
uint64_t enter_outermost();  // 0 when this thread is already inside a TimedOutermost
void leave_outermost(Sum sum, uint64_t start);
}  // namespace detail

// Whether CAPGUARD_STARTUP_TIMES was set when the library loaded (or set_enabled said so).
inline bool enabled() {
  return __builtin_expect(detail::g_enabled.load(std::memory_order_relaxed), 0);
}

// Reads CAPGUARD_STARTUP_TIMES ("1", or any value but "" and "0"); the constructor calls it.
void configure_from_environment();
void set_enabled(bool on);  // tests

// The phase's first time only; later calls change nothing.
inline void mark(Phase phase) {
  if (enabled()) [[unlikely]]
    detail::mark_slow(phase, detail::now_ns());
}
// A phase stamped at a time taken earlier (process_start).
inline void mark_at(Phase phase, uint64_t ns) {
  if (enabled()) [[unlikely]]
    detail::mark_slow(phase, ns);
}

// Adds the time from construction to destruction to a sum, and counts one.
class Timed {
 public:
  explicit Timed(Sum sum) : sum_(sum) {
    if (enabled()) [[unlikely]]
      start_ = detail::now_ns();
  }
  ~Timed() {
    if (start_ != 0) [[unlikely]]
      detail::add_slow(sum_, detail::now_ns() - start_);
  }
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;

 private:
  Sum sum_;
  uint64_t start_ = 0;
};

// The same, counting only the outermost of nested uses on one thread (a callback that comes
// back through capguard's own CUDA calls is not counted twice).
class TimedOutermost {
 public:
  explicit TimedOutermost(Sum sum) : sum_(sum) {
    if (enabled()) [[unlikely]]
      start_ = detail::enter_outermost();
  }
  ~TimedOutermost() {
    if (start_ != 0) [[unlikely]]
      detail::leave_outermost(sum_, start_);
  }
  TimedOutermost(const TimedOutermost&) = delete;
  TimedOutermost& operator=(const TimedOutermost&) = delete;

 private:
  Sum sum_;
  uint64_t start_ = 0;
};

// The time of this process's start in CLOCK_MONOTONIC ns, from /proc/self/stat's starttime
// (clock ticks since boot) and the offset between CLOCK_BOOTTIME and CLOCK_MONOTONIC; 0 when it
// cannot be read. Resolution: one clock tick (10 ms).
uint64_t process_start_ns();

// Formats the table into `out` (terminated); returns its length, 0 when disabled or too small.
size_t format_table(char* out, size_t capacity, uint32_t pid);
// Writes the table to `<dir>/capguard.<pid>.startup`; false (writing nothing) when disabled.
bool write_table(const char* dir, uint32_t pid);

// A fork child forgets its parent's phases and sums and stamps fork_child.
void reset_after_fork();
// Tests: every phase and sum back to zero.
void clear();

uint64_t phase_ns(Phase phase);  // 0: not reached
uint64_t sum_ns(Sum sum);
uint64_t sum_count(Sum sum);

}  // namespace capguard::interposer::startup
