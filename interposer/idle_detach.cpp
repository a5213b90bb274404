#include "interposer/idle_detach.h"

#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "interposer/attach_guards.h"

namespace capguard::interposer::idle_detach {
namespace {

namespace guards = attach_guards;

Config g_config;
std::atomic<bool> g_started{false};
pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;  // one change at a time
std::atomic<uint64_t> g_detaches{0}, g_attaches{0};
std::atomic<bool> g_broken{false};                 // an attach failed: stay as we are
std::atomic<uint64_t> g_heartbeats{0};             // with CAPGUARD_DETACH_LOG only
std::atomic<const char*> g_last_refusal{nullptr};  // the last why_not that said no
uint64_t g_detached_at_ns = 0;                     // under g_mutex
std::atomic<uint64_t> g_idle_ns{0};                // Config::idle_ns, doubled after short detaches

// A detach that ends soon after it began paid about 18 ms (finalize, then subscribe and enable
// again) for little: the idle time asked before the next one doubles, so a program that needs
// CUPTI every P ms pays this a few times (log2 of P over the first idle time), then never.
constexpr uint64_t kShortDetaches = 64;             // "soon": within this many idle times
constexpr uint64_t kShortestDoubledNs = 1'000'000;  // an idle time of 0 doubles to this
constexpr uint64_t kLongestIdleNs = 60'000'000'000;

// The quiet window, kept by whichever heartbeat holds the lock (try-locked: never waited on).
pthread_mutex_t g_window_mutex = PTHREAD_MUTEX_INITIALIZER;
uint64_t g_window_activity = 0;
uint64_t g_window_start_ns = 0;
uint32_t g_window_thread = 0;

uint64_t coarse_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}
// Asked once per thread, not per heartbeat: only whether two heartbeats came from one thread
// matters (a fork child's thread keeps its parent's value, which still tells it from others).
uint32_t kernel_tid() {
  static thread_local const uint32_t tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return tid;
}

double monotonic_ms() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
}

// Stamped with CLOCK_MONOTONIC (seconds), so that a line can be set against the program's own
// timings, and with how long the change held the calling thread (since `began_ms`).
void say(const char* what, double began_ms) {
  if (!g_config.log) return;
  const double now_ms = monotonic_ms();
  std::fprintf(stderr, "capguard: [%.6f] CUPTI %s (%.2f ms)\n", now_ms / 1e3, what,
               now_ms - began_ms);
}

void try_detach() {
  const double began_ms = g_config.log ? monotonic_ms() : 0;
  pthread_mutex_lock(&g_mutex);
  if (guards::state().load() != guards::State::Attached || g_broken.load()) {
    pthread_mutex_unlock(&g_mutex);
    return;
  }
  guards::state().store(guards::State::Detaching, std::memory_order_seq_cst);
  // The guarded calls already past their check finish first: each was seen attached.
  while (guards::in_flight() != 0) sched_yield();
  guards::set_bypass(true);
  const bool detached = g_config.why_not() == nullptr && g_config.detach();
  guards::set_bypass(false);
  guards::state().store(detached ? guards::State::Detached : guards::State::Attached,
                        std::memory_order_seq_cst);
  if (detached) {
    g_detached_at_ns = g_config.clock();
    g_detaches.fetch_add(1, std::memory_order_relaxed);
    say("detached (idle)", began_ms);
  }
  pthread_mutex_unlock(&g_mutex);
}

}  // namespace

bool configure_from_environment(Config& config) {
  const char* log = std::getenv("CAPGUARD_DETACH_LOG");
  config.log = log != nullptr && std::strcmp(log, "1") == 0;
  const char* idle = std::getenv("CAPGUARD_DETACH_IDLE_MS");
  if (idle != nullptr && idle[0] != '\0') {
    if (std::strcmp(idle, "off") == 0) return false;
    char* end = nullptr;
    const unsigned long long ms = std::strtoull(idle, &end, 10);
    if (end == idle || *end != '\0') return false;  // not a number: off, as documented
    config.idle_ns = ms * 1'000'000ull;
  }
  return true;
}

void start(const Config& config) {
  g_config = config;
  if (g_config.clock == nullptr) g_config.clock = &coarse_ns;
  if (g_config.thread_id == nullptr) g_config.thread_id = &kernel_tid;
  guards::Listener listener;
  listener.attach = &on_attach_needed;
  listener.heartbeat = &on_heartbeat;
  listener.sync_failed = config.sync_failed;
  listener.period = config.idle_ns == 0 ? 1 : 64;
  g_idle_ns.store(config.idle_ns, std::memory_order_relaxed);
  guards::listen(listener);
  g_started.store(true, std::memory_order_release);
}

// Every 64th graph launch of a thread: detaches once a window of `idle` has passed with no
// activity and with this thread the only one replaying.
void on_heartbeat() {
  if (!g_started.load(std::memory_order_acquire) ||
      guards::state().load(std::memory_order_relaxed) != guards::State::Attached) {
    return;
  }
  if (g_config.log) g_heartbeats.fetch_add(1, std::memory_order_relaxed);
  if (pthread_mutex_trylock(&g_window_mutex) != 0) return;
  const uint64_t activity = g_config.activity();
  const uint64_t now = g_config.clock();
  const uint32_t tid = g_config.thread_id();
  bool due = false;
  if (g_window_start_ns == 0 || activity != g_window_activity || tid != g_window_thread) {
    g_window_activity = activity;
    g_window_start_ns = now;
    g_window_thread = tid;
    due = g_idle_ns.load(std::memory_order_relaxed) == 0;
  } else {
    due = now - g_window_start_ns >= g_idle_ns.load(std::memory_order_relaxed);
  }
  if (due) {
    if (const char* refused = g_config.why_not()) {
      if (g_config.log) g_last_refusal.store(refused, std::memory_order_relaxed);
      g_window_start_ns = now;  // not now: a new window
      due = false;
    }
  }
  pthread_mutex_unlock(&g_window_mutex);
  if (due) try_detach();
}

void on_attach_needed() {
  const double began_ms = g_config.log ? monotonic_ms() : 0;
  pthread_mutex_lock(&g_mutex);  // waits for a detach in progress
  if (guards::state().load() == guards::State::Detached && !g_broken.load()) {
    guards::set_bypass(true);
    const bool attached = g_config.attach();
    guards::set_bypass(false);
    if (attached) {
      guards::state().store(guards::State::Attached, std::memory_order_seq_cst);
      g_attaches.fetch_add(1, std::memory_order_relaxed);
      const uint64_t idle = g_idle_ns.load(std::memory_order_relaxed);
      // (An idle time of 0 counts as the shortest doubled one here, or it would never double.)
      if (g_config.clock() - g_detached_at_ns <
          kShortDetaches * std::max(idle, kShortestDoubledNs)) {
        g_idle_ns.store(std::clamp(2 * idle, kShortestDoubledNs, kLongestIdleNs),
                        std::memory_order_relaxed);
      }
      // A new window from here, whether or not the call that attached gets recorded.
      pthread_mutex_lock(&g_window_mutex);
      g_window_start_ns = 0;
      pthread_mutex_unlock(&g_window_mutex);
      say("attached again", began_ms);
    } else {
      g_broken.store(true);
      say("could not attach again", began_ms);
    }
  }
  pthread_mutex_unlock(&g_mutex);
}

void ensure_attached() {
  if (g_started.load(std::memory_order_acquire) &&
      guards::state().load(std::memory_order_acquire) != guards::State::Attached) {
    on_attach_needed();
  }
}

void say_at_exit() {
  if (!g_config.log || g_detaches.load() != 0) return;
  const char* refusal = g_last_refusal.load();
  std::fprintf(stderr, "capguard: CUPTI never detached: %llu heartbeats%s%s\n",
               static_cast<unsigned long long>(g_heartbeats.load()),
               refusal != nullptr ? ", last refused: " : "", refusal != nullptr ? refusal : "");
}

uint64_t detaches() { return g_detaches.load(std::memory_order_relaxed); }
uint64_t attaches() { return g_attaches.load(std::memory_order_relaxed); }

void reset_for_tests() {
  g_config = Config{};
  g_started.store(false);
  g_detaches.store(0);
  g_attaches.store(0);
  g_broken.store(false);
  g_heartbeats.store(0);
  g_last_refusal.store(nullptr);
  g_window_activity = 0;
  g_window_start_ns = 0;
  g_window_thread = 0;
  g_detached_at_ns = 0;
  g_idle_ns.store(0);
}

}  // namespace capguard::interposer::idle_detach
