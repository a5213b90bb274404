// Which test was running: the pytest plugin (python/capguard_cuda/pytest_plugin.py) writes
// capguard.<pid>.tests beside the process's trace, one line per test boundary, its time on the
// trace's clock (CLOCK_MONOTONIC nanoseconds):
//
//   capguard-test-begin <time-ns> <pid> <nodeid>
//   capguard-test-end <time-ns> <pid> <nodeid>
//
// Untrusted like the trace (docs/security.md): a regular file only, read up to kMaxTestMarksBytes,
// lines over kMaxTestMarkLine bytes, of another pid, malformed or out of order are ignored, and
// at most kMaxTests tests are named.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace capguard {

inline constexpr size_t kMaxTestMarkLine = 4096;
inline constexpr size_t kMaxTests = 100'000;
inline constexpr uint64_t kMaxTestMarksBytes = 64ull << 20;

struct TestSpan {
  uint64_t begin_ns = 0, end_ns = 0;  // [begin, end); a test never ended runs to the next one
  uint32_t test = 0;                  // index into TestMarks::names
};

struct TestMarks {
  std::vector<std::string> names;  // node ids, in the order they first began
  std::vector<TestSpan> spans;     // ascending, not overlapping
  // The test running at that time, or none.
  std::optional<uint32_t> test_at(uint64_t time_ns) const;
};

// "dir/capguard.42.tests" for "dir/capguard.42.trace"; empty for a path not ending in .trace.
std::string test_marks_path(std::string_view trace_path);
TestMarks parse_test_marks(std::string_view text, uint32_t pid);
// Empty when the file is absent or not a regular file, or when it was last written before
// `not_before_unix_ns` (less kStaleMarksSlackNs for coarse file times): the trace's process
// start, so that a stale file of an earlier process of the same pid names no test.
inline constexpr uint64_t kStaleMarksSlackNs = 50'000'000;
TestMarks read_test_marks(const std::string& path, uint32_t pid, uint64_t not_before_unix_ns = 0);

}  // namespace capguard
