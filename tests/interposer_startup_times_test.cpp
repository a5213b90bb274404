// CAPGUARD_STARTUP_TIMES: the start-up table's format when enabled, and that nothing
// is measured or written when it is not.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "interposer/startup_times.h"
#include "tests/trace_recording_sink.h"
#include "trace/process_clock.h"

namespace capguard::interposer::startup {
namespace {

using trace::testing::TempDir;

std::string table_path(const TempDir& dir, uint32_t pid) {
  return dir.path() + "/capguard." + std::to_string(pid) + ".startup";
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

bool all_digits(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

// Leaves the switch as the process had it (off unless the test run sets the variable).
struct Switch {
  explicit Switch(bool on) {
    clear();
    set_enabled(on);
  }
  ~Switch() {
    set_enabled(false);
    clear();
  }
};

TEST_CASE("disabled: no clock is read, nothing is summed, no file is written") {
  TempDir dir;
  const Switch off(false);
  CHECK_FALSE(enabled());
  mark(Phase::constructor);
  mark_at(Phase::process_start, 12345);
  {
    const Timed timed(Sum::module_scan);
    const TimedOutermost outer(Sum::callbacks);
  }
  CHECK(phase_ns(Phase::constructor) == 0);
  CHECK(phase_ns(Phase::process_start) == 0);
  CHECK(sum_count(Sum::module_scan) == 0);
  CHECK(sum_count(Sum::callbacks) == 0);
  char buffer[256];
  CHECK(format_table(buffer, sizeof buffer, 42) == 0);
  CHECK_FALSE(write_table(dir.path().c_str(), 42));
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("the variable: set and not 0 enables, unset, empty or 0 does not") {
  const Switch off(false);
  const char* old = getenv("CAPGUARD_STARTUP_TIMES");
  const std::string saved = old != nullptr ? old : "";
  for (const auto& [value, expected] : std::vector<std::pair<const char*, bool>>{
           {"1", true}, {"yes", true}, {"0", false}, {"", false}, {nullptr, false}}) {
    if (value != nullptr)
      setenv("CAPGUARD_STARTUP_TIMES", value, 1);
    else
      unsetenv("CAPGUARD_STARTUP_TIMES");
    configure_from_environment();
    CHECK_MESSAGE(enabled() == expected, (value != nullptr ? value : "(unset)"));
  }
  if (old != nullptr)
    setenv("CAPGUARD_STARTUP_TIMES", saved.c_str(), 1);
  else
    unsetenv("CAPGUARD_STARTUP_TIMES");
}

TEST_CASE("enabled: each phase keeps its first time; sums add durations and count") {
  const Switch on(true);
  mark_at(Phase::constructor, 100);
  mark_at(Phase::constructor, 200);  // a later time changes nothing
  CHECK(phase_ns(Phase::constructor) == 100);
  mark(Phase::first_callback);
  const uint64_t first = phase_ns(Phase::first_callback);
  CHECK(first != 0);
  mark(Phase::first_callback);
  CHECK(phase_ns(Phase::first_callback) == first);

  for (int i = 0; i < 3; ++i) {
    const Timed timed(Sum::stack_unwind);
  }
  CHECK(sum_count(Sum::stack_unwind) == 3);
  {
    const TimedOutermost outer(Sum::callbacks);
    const TimedOutermost inner(Sum::callbacks);  // a callback inside a callback: not again
  }
  CHECK(sum_count(Sum::callbacks) == 1);
  {
    const TimedOutermost again(Sum::callbacks);  // the thread left the first one
  }
  CHECK(sum_count(Sum::callbacks) == 2);
}

TEST_CASE("enabled: the table is written as '# header', 'point NAME NS' and 'sum NAME NS COUNT'") {
  TempDir dir;
  const Switch on(true);
  mark_at(Phase::process_start, 1000);
  mark_at(Phase::constructor, 2000);
  mark_at(Phase::subscribed, 5000);
  mark_at(Phase::exit, 9000);
  for (int i = 0; i < 2; ++i) {
    const Timed timed(Sum::module_scan);
  }
  const uint32_t pid = 4242;
  REQUIRE(write_table(dir.path().c_str(), pid));
  const std::vector<std::string> lines = lines_of(table_path(dir, pid));
  REQUIRE(lines.size() == 1 + 4 + static_cast<size_t>(Sum::count));
  CHECK(lines[0] == "# capguard startup times, pid 4242, CLOCK_MONOTONIC ns");
  // Reached phases only, in the order of Phase.
  CHECK(lines[1] == "point process_start 1000");
  CHECK(lines[2] == "point constructor 2000");
  CHECK(lines[3] == "point subscribed 5000");
  CHECK(lines[4] == "point exit 9000");
  // Every sum, reached or not.
  const std::vector<std::string> sums = {"callbacks",     "module_scan", "stack_unwind",
                                         "python_frames", "graph_walk",  "cupti_enable"};
  REQUIRE(sums.size() == static_cast<size_t>(Sum::count));
  for (size_t i = 0; i < sums.size(); ++i) {
    const std::vector<std::string> w = words(lines[5 + i]);
    REQUIRE(w.size() == 4);
    CHECK(w[0] == "sum");
    CHECK(w[1] == sums[i]);
    CHECK(all_digits(w[2]));
    CHECK(all_digits(w[3]));
    CHECK(w[3] == (sums[i] == "module_scan" ? "2" : "0"));
  }
}

TEST_CASE("a fork child starts its table afresh") {
  const Switch on(true);
  mark_at(Phase::constructor, 2000);
  { const Timed timed(Sum::graph_walk); }
  reset_after_fork();
  CHECK(phase_ns(Phase::constructor) == 0);
  CHECK(phase_ns(Phase::fork_child) != 0);
  CHECK(sum_count(Sum::graph_walk) == 0);
}

TEST_CASE("the process's start is before now on the monotonic clock") {
  const uint64_t start = trace::process_start_ns();
  const uint64_t now = trace::clock_ns(CLOCK_MONOTONIC);
  REQUIRE(start != 0);
  CHECK(start <= now);
  // /proc's starttime has the resolution of a clock tick; this test process is young enough.
  CHECK(now - start < 3600ull * 1000000000ull);
}

}  // namespace
}  // namespace capguard::interposer::startup
