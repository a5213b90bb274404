#include "interposer/startup_times.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "trace/errno_guard.h"
#include "trace/process_clock.h"

namespace capguard::interposer::startup {

namespace detail {
std::atomic<bool> g_enabled{false};
}  // namespace detail

namespace {

constexpr size_t kPhases = static_cast<size_t>(Phase::count);
constexpr size_t kSums = static_cast<size_t>(Sum::count);

constexpr const char* kPhaseNames[] = {
#define CAPGUARD_X(name) #name,
    CAPGUARD_STARTUP_PHASES(CAPGUARD_X)
#undef CAPGUARD_X
};
constexpr const char* kSumNames[] = {
#define CAPGUARD_X(name) #name,
    CAPGUARD_STARTUP_SUMS(CAPGUARD_X)
#undef CAPGUARD_X
};
static_assert(sizeof(kPhaseNames) / sizeof(kPhaseNames[0]) == kPhases);
static_assert(sizeof(kSumNames) / sizeof(kSumNames[0]) == kSums);

std::atomic<uint64_t> g_phases[kPhases] = {};
std::atomic<uint64_t> g_sum_ns[kSums] = {};
std::atomic<uint64_t> g_sum_count[kSums] = {};
thread_local bool t_inside = false;

}  // namespace

namespace detail {

uint64_t now_ns() { return trace::clock_ns(CLOCK_MONOTONIC); }

void mark_slow(Phase phase, uint64_t ns) {
  const auto i = static_cast<size_t>(phase);
  if (i >= kPhases || ns == 0) return;
  uint64_t expected = 0;
  g_phases[i].compare_exchange_strong(expected, ns, std::memory_order_relaxed);
}

void add_slow(Sum sum, uint64_t ns) {
  const auto i = static_cast<size_t>(sum);
  if (i >= kSums) return;
  g_sum_ns[i].fetch_add(ns, std::memory_order_relaxed);
  g_sum_count[i].fetch_add(1, std::memory_order_relaxed);
}

uint64_t enter_outermost() {
  if (t_inside) return 0;
  t_inside = true;
  return now_ns();
}

void leave_outermost(Sum sum, uint64_t start) {
  add_slow(sum, now_ns() - start);
  t_inside = false;
}

}  // namespace detail

void configure_from_environment() {
  const char* value = getenv("CAPGUARD_STARTUP_TIMES");
  set_enabled(value != nullptr && value[0] != '\0' && strcmp(value, "0") != 0);
}

void set_enabled(bool on) { detail::g_enabled.store(on, std::memory_order_relaxed); }

uint64_t process_start_ns() { return trace::process_start_ns(); }

size_t format_table(char* out, size_t capacity, uint32_t pid) {
  if (!enabled() || capacity == 0) return 0;
  size_t n = 0;
  auto append = [&](int written) {
    if (written < 0 || n + static_cast<size_t>(written) >= capacity) return false;
    n += static_cast<size_t>(written);
    return true;
  };
  if (!append(
          snprintf(out, capacity, "# capguard startup times, pid %u, CLOCK_MONOTONIC ns\n", pid))) {
    out[0] = '\0';
    return 0;
  }
  for (size_t i = 0; i < kPhases; ++i) {
    const uint64_t ns = g_phases[i].load(std::memory_order_relaxed);
    if (ns == 0) continue;
    if (!append(snprintf(out + n, capacity - n, "point %s %llu\n", kPhaseNames[i],
                         static_cast<unsigned long long>(ns)))) {
      out[0] = '\0';
      return 0;
    }
  }
  for (size_t i = 0; i < kSums; ++i) {
    if (!append(snprintf(out + n, capacity - n, "sum %s %llu %llu\n", kSumNames[i],
                         static_cast<unsigned long long>(g_sum_ns[i].load()),
                         static_cast<unsigned long long>(g_sum_count[i].load())))) {
      out[0] = '\0';
      return 0;
    }
  }
  return n;
}

bool write_table(const char* dir, uint32_t pid) {
  if (!enabled() || dir == nullptr || dir[0] == '\0') return false;
  trace::ErrnoGuard keep_errno;
  char table[4096];
  const size_t n = format_table(table, sizeof(table), pid);
  if (n == 0) return false;
  char path[4200];
  const int length = snprintf(path, sizeof(path), "%s/capguard.%u.startup", dir, pid);
  if (length < 0 || static_cast<size_t>(length) >= sizeof(path)) return false;
  // A new file only: never through a planted symlink, never onto a FIFO.
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < n) {
    const ssize_t w = ::write(fd, table + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  ::close(fd);
  return done == n;
}

void reset_after_fork() {
  if (!enabled()) return;
  clear();
  mark(Phase::fork_child);
}

void clear() {
  for (auto& phase : g_phases) phase.store(0, std::memory_order_relaxed);
  for (size_t i = 0; i < kSums; ++i) {
    g_sum_ns[i].store(0, std::memory_order_relaxed);
    g_sum_count[i].store(0, std::memory_order_relaxed);
  }
  t_inside = false;
}

uint64_t phase_ns(Phase phase) {
  const auto i = static_cast<size_t>(phase);
  return i < kPhases ? g_phases[i].load(std::memory_order_relaxed) : 0;
}
uint64_t sum_ns(Sum sum) {
  const auto i = static_cast<size_t>(sum);
  return i < kSums ? g_sum_ns[i].load(std::memory_order_relaxed) : 0;
}
uint64_t sum_count(Sum sum) {
  const auto i = static_cast<size_t>(sum);
  return i < kSums ? g_sum_count[i].load(std::memory_order_relaxed) : 0;
}

}  // namespace capguard::interposer::startup
