// When this process started, on the CLOCK_MONOTONIC scale that trace times use: for the
// start-up timings of the interposer (interposer/startup_times.h) and of `capguard
// run` (cli/run_command.cpp). Header-only, standard library and POSIX only, no allocation.
#pragma once

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace capguard::trace {

inline uint64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The time of this process's start in CLOCK_MONOTONIC ns, from /proc/self/stat's starttime
// (clock ticks since boot, counting suspend like CLOCK_BOOTTIME) less the time the machine was
// suspended; 0 when it cannot be read. Resolution: one clock tick (10 ms at USER_HZ 100).
inline uint64_t process_start_ns() {
  const int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char line[1024];
  const ssize_t n = ::read(fd, line, sizeof(line) - 1);
  ::close(fd);
  if (n <= 0) return 0;
  line[n] = '\0';
  const char* p = strrchr(line, ')');  // the command name may hold spaces and parentheses
  if (p == nullptr) return 0;
  ++p;
  // The fields after the name start with the 3rd (state); starttime is the 22nd.
  for (int field = 3; field < 22; ++field) {
    while (*p == ' ') ++p;
    while (*p != ' ' && *p != '\0') ++p;
    if (*p == '\0') return 0;
  }
  while (*p == ' ') ++p;
  char* end = nullptr;
  const unsigned long long ticks = strtoull(p, &end, 10);
  const long hz = sysconf(_SC_CLK_TCK);
  if (end == p || hz <= 0) return 0;
  const auto per_second = static_cast<uint64_t>(hz);
  const uint64_t since_boot =
      ticks / per_second * 1000000000ull + ticks % per_second * (1000000000ull / per_second);
  const uint64_t boot = clock_ns(CLOCK_BOOTTIME), mono = clock_ns(CLOCK_MONOTONIC);
  const uint64_t suspended = boot > mono ? boot - mono : 0;
  return since_boot > suspended ? since_boot - suspended : 0;
}

}  // namespace capguard::trace
