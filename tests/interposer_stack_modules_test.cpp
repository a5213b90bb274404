// Stack capture and deduplication, and the module map read from this very test binary.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "interposer/modules.h"
#include "interposer/stack.h"
#include "tests/trace_recording_sink.h"
#include "trace/reader.h"
#include "trace/writer.h"

namespace capguard::interposer {
namespace {

using trace::testing::RecordingSink;
using trace::testing::TempDir;

// Not a tail call (the volatile store comes after), so this frame's return address is on the
// stack at -O2 too.
__attribute__((noinline)) size_t capture_here(uint64_t* out, size_t capacity, uint64_t skip_start,
                                              uint64_t skip_end) {
  const size_t depth = capture_stack(out, capacity, skip_start, skip_end);
  volatile size_t keep_frame = depth;
  return keep_frame;
}

std::string self_exe() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

// The build-id as binutils sees it, or "" when readelf is not installed.
std::string readelf_build_id(const std::string& path) {
  std::string command = "readelf -n '" + path + "' 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  char line[512];
  std::string id;
  while (fgets(line, sizeof(line), pipe) != nullptr) {
    const std::string text(line);
    const auto at = text.find("Build ID: ");
    if (at != std::string::npos)
      id = text.substr(at + 10, text.find_first_of("\r\n", at) - at - 10);
  }
  pclose(pipe);
  return id;
}

TEST_CASE("a stack hash depends on every address and on their order") {
  const uint64_t a[] = {1, 2, 3};
  const uint64_t b[] = {1, 3, 2};
  const uint64_t c[] = {1, 2};
  CHECK(hash_stack(a, 3) == hash_stack(a, 3));
  CHECK(hash_stack(a, 3) != hash_stack(b, 3));
  CHECK(hash_stack(a, 3) != hash_stack(c, 2));
  CHECK(hash_stack(a, 0) != 0);
}

TEST_CASE("the per-thread stack cache returns the id of a stack seen before") {
  StackCache cache;
  CHECK(cache.find(42) == 0);
  cache.insert(42, 7);
  CHECK(cache.find(42) == 7);
  // A stack that lands in the same slot evicts the older one, which is then defined anew.
  const uint64_t colliding = 42 + StackCache::kSlots;
  cache.insert(colliding, 8);
  CHECK(cache.find(colliding) == 8);
  CHECK(cache.find(42) == 0);
  cache.clear();
  CHECK(cache.find(colliding) == 0);
}

TEST_CASE("capture_stack returns this thread's return addresses, leaving out a skipped range") {
  uint64_t frames[64];
  const size_t depth = capture_here(frames, 64, 0, 0);
  REQUIRE(depth >= 2);
  const auto here = reinterpret_cast<uint64_t>(&capture_here);
  // The innermost frame is capture_stack itself, the next one the caller, a little past its start.
  bool caller_seen = false;
  for (size_t i = 0; i < depth; ++i) caller_seen |= frames[i] > here && frames[i] < here + 256;
  CHECK(caller_seen);
  CHECK(capture_here(frames, 64, 0, UINT64_MAX) == 0);
  CHECK(capture_here(frames, 1, 0, 0) == 1);
}

TEST_CASE("the module map names this binary, its range and its GNU build-id") {
  TempDir dir;
  trace::TraceWriter writer;
  REQUIRE(writer.open(dir.path().c_str(), 1, 0, 0));
  static ModuleMap modules;  // large: not on the stack
  modules.reset();
  modules.refresh(writer);
  modules.refresh(writer);  // nothing new loaded: nothing written twice
  const auto code = reinterpret_cast<uint64_t>(&capture_here);
  CHECK(modules.contains(code));
  CHECK_FALSE(modules.contains(0x10));

  RecordingSink sink;
  REQUIRE_FALSE(trace::read_trace(writer.path(), sink).has_value());
  const trace::testing::RecordedModule* self = nullptr;
  int libc_records = 0;
  for (const auto& m : sink.modules) {
    if (code >= m.start && code < m.end) self = &m;
    if (m.path.find("libc.so") != std::string::npos) ++libc_records;
  }
  CHECK(libc_records == 1);
  REQUIRE(self != nullptr);
  CHECK(self->path == self_exe());
  CHECK(self->start >= self->base);
  const std::string expected = readelf_build_id(self->path);
  if (expected.empty()) {
    MESSAGE("readelf not available: build-id checked for form only");
    CHECK(self->build_id.size() >= 16);
  } else {
    CHECK(self->build_id == expected);
  }
}

}  // namespace
}  // namespace capguard::interposer
