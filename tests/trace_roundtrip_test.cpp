// What TraceWriter writes, read_trace reads back unchanged, field for field.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>

#include "tests/trace_recording_sink.h"
#include "trace/writer.h"

namespace capguard::trace {
namespace {

using testing::RecordingSink;
using testing::TempDir;

constexpr uint32_t kPid = 4242;

// Writes through `write` into a fresh trace, then reads it back into `sink`.
template <class WriteFn>
void round_trip(RecordingSink& sink, WriteFn write) {
  TempDir dir;
  TraceWriter writer;
  REQUIRE(writer.open(dir.path().c_str(), kPid, 1, 0x1234));
  write(writer);
  const std::string path = writer.path();
  writer.abandon();
  const auto error = read_trace(path, sink);
  REQUIRE_MESSAGE(!error, error->to_string());
}

ApiEvent event_with_every_field() {
  ApiEvent e;
  e.seq = std::numeric_limits<uint64_t>::max();
  e.time_ns = 0x17f0e1d2c3b4a596;
  e.tid = std::numeric_limits<uint32_t>::max();
  e.api = "cudaStreamBeginCapture_v10000";
  e.result = -1;
  e.stack = 7;
  e.stream = 0xffffffffffffffff;
  e.stream_flags = 0xffffffff;
  e.status_before = CaptureStatus::Active;
  e.status_after = CaptureStatus::Invalidated;
  e.capture_id = 0x8000000000000001;
  e.event = 0x7ffd0000beef;
  e.flags = 0xdeadbeef;
  e.mode = CaptureMode::Relaxed;
  e.prev_mode = CaptureMode::ThreadLocal;
  e.copy_kind = 4;
  e.graph = 0x5555aaaa0000;
  e.graph_exec = 0x6666bbbb0000;
  e.nodes = 1000000;
  e.domain = ApiDomain::Driver;
  e.pointer = 0x7f0000001000;
  e.size = 0x100000;
  e.node_index = 0x2a;
  e.fields = (1u << kFieldCount) - 1;
  return e;
}

TEST_SUITE("trace_roundtrip_test") {
  TEST_CASE("open writes the header and the process record, named after the pid") {
    TempDir dir;
    TraceWriter writer;
    REQUIRE(writer.open(dir.path().c_str(), kPid, 77, 0xabcdef0123456789));
    CHECK(std::string(writer.path()) == dir.path() + "/capguard.4242.trace");
    RecordingSink sink;
    REQUIRE_FALSE(read_trace(writer.path(), sink));
    CHECK(sink.types == "vp");
    CHECK(sink.tool_version == kToolVersion);
    CHECK(sink.format_version == kFormatVersion);
    CHECK(sink.process.pid == kPid);
    CHECK(sink.process.ppid == 77);
    CHECK(sink.process.start_unix_ns == 0xabcdef0123456789);
  }

  TEST_CASE("a second trace for the same pid gets a suffix and still ends in .trace") {
    TempDir dir;
    TraceWriter first, second, third;
    REQUIRE(first.open(dir.path().c_str(), kPid, 1, 0));
    REQUIRE(second.open(dir.path().c_str(), kPid, 1, 0));
    REQUIRE(third.open(dir.path().c_str(), kPid, 1, 0));
    CHECK(std::string(second.path()) == dir.path() + "/capguard.4242.1.trace");
    CHECK(std::string(third.path()) == dir.path() + "/capguard.4242.2.trace");
  }

  TEST_CASE("rehearsed ranges (v6) survive with their domain, name and thread") {
    TempDir dir;
    TraceWriter writer;
    REQUIRE(writer.open(dir.path().c_str(), kPid, 1, 0));
    writer.write_range_begin(7, 0x1000, 99, 1, "", "capguard:decode step");
    writer.write_range_begin(8, 0x1001, 99, 0xffffffffffffffff, "my%domain", std::string(300, 'n'));
    writer.write_range_end(9, 0x1002, 100, 1);
    RecordingSink sink;
    REQUIRE_FALSE(read_trace(writer.path(), sink));
    CHECK(sink.types == "vprrR");
    REQUIRE(sink.ranges.size() == 3);
    CHECK(sink.ranges[0].begin);
    CHECK(sink.ranges[0].seq == 7);
    CHECK(sink.ranges[0].time_ns == 0x1000);
    CHECK(sink.ranges[0].tid == 99);
    CHECK(sink.ranges[0].id == 1);
    CHECK(sink.ranges[0].domain.empty());
    CHECK(sink.ranges[0].name == "capguard:decode step");
    CHECK(sink.ranges[1].id == 0xffffffffffffffff);
    CHECK(sink.ranges[1].domain == "my%domain");
    CHECK(sink.ranges[1].name == std::string(kMaxRangeNameLength, 'n'));  // cut
    CHECK_FALSE(sink.ranges[2].begin);
    CHECK(sink.ranges[2].tid == 100);
    CHECK(sink.ranges[2].seq == 9);
  }

  TEST_CASE("open fails cleanly for a missing directory and leaves errno alone") {
    TraceWriter writer;
    errno = 1234;
    CHECK_FALSE(writer.open("/nonexistent/capguard/dir", kPid, 1, 0));
    CHECK(errno == 1234);
    CHECK_FALSE(writer.is_open());
    writer.write_command("nothing happens when closed");
  }

  TEST_CASE("an event with every field set survives with extreme values") {
    const ApiEvent want = event_with_every_field();
    const uint64_t frames[] = {0x401000, 0x7fffffffffffffff, 0};
    RecordingSink sink;
    round_trip(sink, [&](TraceWriter& w) { w.write_event(want, frames, 3); });
    CHECK(sink.types == "vpse");
    REQUIRE(sink.events.size() == 1);
    testing::check_same_event(sink.events[0], want);
    CHECK(sink.stacks[7] == std::vector<uint64_t>(std::begin(frames), std::end(frames)));
  }

  TEST_CASE(
      "the bytes of an event line: fields in key order st sf sb sa ci ev fl md pm ck gr gx nd dm "
      "pt sz ni") {
    TempDir dir;
    TraceWriter writer;
    REQUIRE(writer.open(dir.path().c_str(), kPid, 1, 0x1234));
    ApiEvent e = event_with_every_field();
    e.stack = 0;
    writer.write_event(e);
    const std::string path = writer.path();
    writer.abandon();
    std::ifstream in(path);
    std::string line, last;
    while (std::getline(in, line)) last = line;
    CHECK(last ==
          "e ffffffffffffffff 17f0e1d2c3b4a596 ffffffff cudaStreamBeginCapture_v10000 ffffffff 0 "
          "st=ffffffffffffffff sf=ffffffff sb=1 sa=2 ci=8000000000000001 ev=7ffd0000beef "
          "fl=deadbeef md=2 pm=1 ck=4 gr=5555aaaa0000 gx=6666bbbb0000 nd=f4240 dm=1 "
          "pt=7f0000001000 sz=100000 ni=2a");
  }

  TEST_CASE("an event with no field set reads back with none set") {
    ApiEvent want;
    want.seq = 1;
    want.api = "cudaMalloc";
    RecordingSink sink;
    round_trip(sink, [&](TraceWriter& w) { w.write_event(want); });
    REQUIRE(sink.events.size() == 1);
    testing::check_same_event(sink.events[0], want);
  }

  TEST_CASE("each field set alone comes back alone") {
    const ApiEvent full = event_with_every_field();
    for (int i = 0; i < kFieldCount; ++i) {
      CAPTURE(kFieldKeys[i]);
      ApiEvent want = full;
      want.stack = 0;
      want.fields = 1u << i;
      RecordingSink sink;
      round_trip(sink, [&](TraceWriter& w) { w.write_event(want); });
      REQUIRE(sink.events.size() == 1);
      CHECK(sink.events[0].fields == want.fields);
      CHECK(sink.events[0].has(static_cast<Field>(1u << i)));
    }
  }

  TEST_CASE("strings with spaces, newlines, percent signs and non-ASCII bytes survive") {
    const std::string nasty =
        "python3 train.py --name \"a b\"\n\t100% \xc3\xa9t\xc3\xa9 %41 \x7f\x01";
    RecordingSink sink;
    round_trip(sink, [&](TraceWriter& w) {
      w.write_command(nasty.c_str());
      w.write_attach(false, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: another tool\n");
      w.write_attach(true, "");
      w.write_module(0x7f0000000000, 0x7f0000001000, 0x7f0000009000, "/opt/my lib/libx%.so",
                     "0123456789abcdef0123456789abcdef01234567");
      w.write_module(0x400000, 0x400000, 0x500000, "", nullptr);
      w.write_module(1, 2, 3, "/no/build/id", "");
    });
    CHECK(sink.types == "vpciimmm");
    REQUIRE(sink.commands.size() == 1);
    CHECK(sink.commands[0] == nasty);
    CHECK(sink.attaches[0] ==
          std::pair<bool, std::string>(
              false, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: another tool\n"));
    CHECK(sink.attaches[1] == std::pair<bool, std::string>(true, ""));
    CHECK(sink.modules[0].base == 0x7f0000000000);
    CHECK(sink.modules[0].start == 0x7f0000001000);
    CHECK(sink.modules[0].end == 0x7f0000009000);
    CHECK(sink.modules[0].path == "/opt/my lib/libx%.so");
    CHECK(sink.modules[0].build_id == "0123456789abcdef0123456789abcdef01234567");
    CHECK(sink.modules[1].path.empty());
    CHECK(sink.modules[1].build_id.empty());
    CHECK(sink.modules[2].path == "/no/build/id");
  }

  TEST_CASE("the CUDA a process ran (format 7's 'w' record), paths with spaces or empty") {
    RecordingSink sink;
    round_trip(sink, [&](TraceWriter& w) {
      w.write_cuda(12040, 13000, 12, 28, "static", 0, "/opt/my app/bin/train", "");
      w.write_cuda(0, 12080, 0, 0, "unknown", 13000, "", "/usr/local/cuda-12/lib64/libcupti.so.12");
    });
    CHECK(sink.types == "vpww");
    REQUIRE(sink.cudas.size() == 2);
    CHECK(sink.cudas[0].runtime == 12040);
    CHECK(sink.cudas[0].driver == 13000);
    CHECK(sink.cudas[0].cupti_major == 12);
    CHECK(sink.cudas[0].cupti_api == 28);
    CHECK(sink.cudas[0].linkage == "static");
    CHECK(sink.cudas[0].runtime_path == "/opt/my app/bin/train");
    CHECK(sink.cudas[0].cupti_path.empty());
    CHECK(sink.cudas[1].other_runtime == 13000);
    CHECK(sink.cudas[1].linkage == "unknown");
    CHECK(sink.cudas[1].cupti_path == "/usr/local/cuda-12/lib64/libcupti.so.12");
  }

  TEST_CASE("a build id that is not lower-case hex is left out rather than breaking the line") {
    RecordingSink sink;
    round_trip(sink, [&](TraceWriter& w) { w.write_module(1, 2, 3, "/lib.so", "ABC DEF"); });
    REQUIRE(sink.modules.size() == 1);
    CHECK(sink.modules[0].path == "/lib.so");
    CHECK(sink.modules[0].build_id.empty());
  }

  TEST_CASE("a very long command line is cut at an escape boundary, never mid-escape") {
    std::string huge;
    while (huge.size() < 100000) huge += "arg%with spaces\n";
    RecordingSink sink;
    round_trip(sink, [&](TraceWriter& w) {
      w.write_command(huge.c_str());
      w.write_end(5, 0);
    });
    CHECK(sink.types == "vpcz");
    REQUIRE(sink.commands.size() == 1);
    CHECK(sink.commands[0].size() > 2000);
    CHECK(sink.commands[0].size() < huge.size());
    CHECK(huge.compare(0, sink.commands[0].size(), sink.commands[0]) == 0);
  }

  TEST_CASE("an api name with bytes that would break the line is sanitized") {
    ApiEvent e;
    e.api = std::string_view("cuda Memcpy\nx\0y", 15);
    ApiEvent empty_name;
    ApiEvent long_name;
    const std::string very_long(1000, 'A');
    long_name.api = very_long;
    RecordingSink sink;
    round_trip(sink, [&](TraceWriter& w) {
      w.write_event(e);
      w.write_event(empty_name);
      w.write_event(long_name);
    });
    REQUIRE(sink.events.size() == 3);
    CHECK(sink.events[0].api == "cuda?Memcpy?x?y");
    CHECK(sink.events[1].api == "?");
    CHECK(sink.events[2].api == std::string(kMaxApiNameLength, 'A'));
  }

  TEST_CASE("a deep stack is clamped to its innermost kMaxStackDepth frames") {
    std::vector<uint64_t> frames(500);
    for (size_t i = 0; i < frames.size(); ++i) frames[i] = 0x1000 + i;
    ApiEvent e = event_with_every_field();
    e.stack = 9;
    RecordingSink sink;
    round_trip(sink, [&](TraceWriter& w) { w.write_event(e, frames.data(), frames.size()); });
    REQUIRE(sink.stacks.count(9) == 1);
    const std::vector<uint64_t> innermost(frames.begin(),
                                          frames.begin() + TraceWriter::kMaxStackDepth);
    CHECK(sink.stacks[9] == innermost);
    REQUIRE(sink.events.size() == 1);
    testing::check_same_event(sink.events[0], e);
  }

  TEST_CASE("a stack is defined once and reused by id; an empty stack is no stack") {
    const uint64_t frames[] = {0xa, 0xb};
    ApiEvent first, again, empty;
    first.stack = again.stack = 3;
    empty.stack = 4;
    RecordingSink sink;
    round_trip(sink, [&](TraceWriter& w) {
      w.write_event(first, frames, 2);
      w.write_event(again);
      w.write_event(empty, frames, 0);
    });
    CHECK(sink.types == "vpseee");
    CHECK(sink.events[1].stack == 3);
    CHECK(sink.events[2].stack == 0);
  }

  TEST_CASE("thread exit and end records keep their values, negative statuses included") {
    RecordingSink sink;
    round_trip(sink, [&](TraceWriter& w) {
      w.write_thread_exit(0xfffffffe, 99);
      w.write_end(0xffffffffffffffff, -6);
    });
    CHECK(sink.thread_exits == std::vector<std::pair<uint32_t, uint64_t>>{{0xfffffffe, 99}});
    CHECK(sink.ends == std::vector<std::pair<uint64_t, int>>{{0xffffffffffffffff, -6}});
  }
}

}  // namespace
}  // namespace capguard::trace
