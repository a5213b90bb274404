// run_child leaves capguard's signal dispositions as it found them, on every path out.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>

#include "cli/process.h"

namespace capguard::cli {
namespace {

void marker_handler(int) {}

// Installs marker_handler for SIGINT, SIGQUIT, SIGTERM and SIGHUP while it lives.
class MarkedSignals {
 public:
  MarkedSignals() {
    struct sigaction marker {};
    marker.sa_handler = marker_handler;
    for (size_t i = 0; i < kCount; ++i) sigaction(kSignals[i], &marker, &saved_[i]);
  }
  ~MarkedSignals() {
    for (size_t i = 0; i < kCount; ++i) sigaction(kSignals[i], &saved_[i], nullptr);
  }
  static void check_untouched() {
    for (int signal_number : kSignals) {
      struct sigaction now {};
      sigaction(signal_number, nullptr, &now);
      CAPTURE(signal_number);
      const bool untouched = now.sa_handler == &marker_handler;
      CHECK(untouched);
    }
  }

 private:
  static constexpr size_t kCount = 4;
  static constexpr int kSignals[kCount] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
  struct sigaction saved_[kCount] {};
};

TEST_SUITE("cli_process_test") {
  TEST_CASE("a program that runs: its status, and the dispositions put back") {
    MarkedSignals marked;
    const ChildResult result = run_child("/bin/sh", {"sh", "-c", "exit 7"}, ChildEnvironment{});
    CHECK(result.exec_error.empty());
    CHECK(result.status == 7);
    MarkedSignals::check_untouched();
  }

  TEST_CASE("a program that cannot be executed: the error, and the dispositions put back") {
    MarkedSignals marked;
    const ChildResult result = run_child("/nonexistent/program", {"program"}, ChildEnvironment{});
    CHECK_FALSE(result.exec_error.empty());
    MarkedSignals::check_untouched();
  }

  TEST_CASE("no descriptor left for the pipe: the error, and SIGINT/SIGQUIT not left ignored") {
    MarkedSignals marked;
    rlimit saved{};
    REQUIRE(getrlimit(RLIMIT_NOFILE, &saved) == 0);
    const int lowest_free = dup(0);  // every descriptor below it is taken
    REQUIRE(lowest_free >= 0);
    close(lowest_free);
    rlimit tight = saved;
    tight.rlim_cur = static_cast<rlim_t>(lowest_free);
    REQUIRE(setrlimit(RLIMIT_NOFILE, &tight) == 0);
    const ChildResult result = run_child("/bin/true", {"true"}, ChildEnvironment{});
    REQUIRE(setrlimit(RLIMIT_NOFILE, &saved) == 0);
    CHECK_FALSE(result.exec_error.empty());
    MarkedSignals::check_untouched();
  }
}

}  // namespace
}  // namespace capguard::cli
