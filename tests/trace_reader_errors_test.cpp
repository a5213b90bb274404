// Damaged traces: each gives one clear ReadError at the right line, after every record before
// the damage was delivered, and never a crash. A damaged line past the header is skipped
// (named to the sink) and reading goes on; what ends reading is returned.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <random>
#include <sstream>

#include "tests/trace_recording_sink.h"
#include "trace/writer.h"

namespace capguard::trace {
namespace {

using testing::RecordingSink;
using testing::TempDir;

const std::string kGoodStart = "v 0.1.0 1\np 10 1 0\n";

// The first problem, whether it ended reading or only cost its line.
std::optional<ReadError> read_text(const std::string& text, RecordingSink& sink) {
  std::istringstream in(text);
  auto error = read_trace(in, "t.trace", sink);
  if (!sink.skipped.empty()) return sink.skipped.front();
  return error;
}

// Reads `text` and expects exactly one error at `line` whose message contains `part`.
ReadError expect_error(const std::string& text, uint64_t line, const std::string& part,
                       RecordingSink& sink) {
  const auto error = read_text(text, sink);
  REQUIRE(error.has_value());
  CAPTURE(error->to_string());
  CHECK(error->source == "t.trace");
  CHECK(error->line == line);
  CHECK(error->message.find(part) != std::string::npos);
  return *error;
}
ReadError expect_error(const std::string& text, uint64_t line, const std::string& part) {
  RecordingSink sink;
  return expect_error(text, line, part, sink);
}

TEST_SUITE("trace_reader_errors_test") {
  TEST_CASE("a damaged line is skipped, named once, and the records after it still read") {
    RecordingSink sink;
    const std::string event = "e 1 a 1e241 cudaLaunchKernel 0 0 st=5000\n";
    std::istringstream in(kGoodStart + event + "e 2 zz\n" + std::string("e 3\0 b", 7) + "\n" + "e" +
                          std::string(70000, 'x') + "\n" + event + "z 28 0\n");
    CHECK_FALSE(read_trace(in, "t.trace", sink).has_value());
    CHECK(sink.types == "vpe!!!ez");
    REQUIRE(sink.skipped.size() == 3);
    CHECK(sink.skipped[0].line == 4);
    CHECK(sink.skipped[1].line == 5);
    CHECK(sink.skipped[2].line == 6);
    CHECK(sink.skipped[2].message.find("longer than") != std::string::npos);
  }

  TEST_CASE("an empty file is an empty trace") {
    const ReadError e = expect_error("", 0, "empty trace");
    CHECK(e.to_string() == "t.trace: empty trace");
  }

  TEST_CASE("a missing file says it cannot be opened, and why") {
    RecordingSink sink;
    const auto error = read_trace("/nonexistent/capguard.1.trace", sink);
    REQUIRE(error.has_value());
    CHECK(error->line == 0);
    CHECK(error->to_string() ==
          "/nonexistent/capguard.1.trace: cannot open trace: No such file or directory");
  }

  TEST_CASE("a FIFO, a directory or a device as a trace is refused, never waited on") {
    // A trace swapped for a FIFO between the directory scan and open() hung the
    // report in open(); the reader opens without blocking and checks what it opened.
    TempDir dir;
    const std::string fifo = dir.path() + "/capguard.1.trace";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    auto read = std::async(std::launch::async, [&] {
      RecordingSink sink;
      return read_trace(fifo, sink);
    });
    if (read.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      FAIL_CHECK("read_trace waited on a FIFO with no writer");
      ::close(::open(fifo.c_str(), O_WRONLY));  // a writer at last: its open() returns
    }
    const auto error = read.get();
    REQUIRE(error.has_value());
    CHECK(error->to_string() == fifo + ": cannot open trace: not a regular file");
    for (const std::string& path : {dir.path(), std::string("/dev/null")}) {
      RecordingSink sink;
      const auto refused = read_trace(path, sink);
      REQUIRE(refused.has_value());
      CHECK(refused->to_string() == path + ": cannot open trace: not a regular file");
      CHECK(sink.types.empty());
    }
  }

  TEST_CASE("random bytes are not a capguard trace") {
    std::mt19937 random(7);
    std::string bytes(4096, '\0');
    for (char& c : bytes) c = static_cast<char>(random());
    RecordingSink sink;
    expect_error(bytes, 1, "not a capguard trace", sink);
    CHECK(sink.types.empty());
    expect_error("hello world\n", 1, "not a capguard trace");
  }

  TEST_CASE("a trace cut mid-line delivers everything before the cut") {
    TempDir dir;
    TraceWriter writer;
    REQUIRE(writer.open(dir.path().c_str(), 5, 1, 0));
    ApiEvent e;
    e.api = "cudaLaunchKernel";
    for (e.seq = 1; e.seq <= 3; ++e.seq) writer.write_event(e);
    std::ifstream file(writer.path());
    std::string whole((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    RecordingSink sink;
    expect_error(whole.substr(0, whole.size() - 4), 5, "truncated: last record is incomplete",
                 sink);
    CHECK(sink.types == "vpee");
    CHECK(sink.events.back().seq == 2);
  }

  TEST_CASE("a newer format version asks for an upgrade, naming both versions") {
    const ReadError e = expect_error("v 9.9.9 a new-field\np 1 1 0\n", 1, "");
    CHECK(
        e.to_string() ==
        "t.trace:1: written by capguard 9.9.9 (trace format 10); this capguard reads format <= 9: "
        "upgrade capguard");
    expect_error("v 0.0.1 0\n", 1, "unsupported trace format 0");
  }

  TEST_CASE("the header and the process record come first, once") {
    expect_error("p 1 1 0\n", 1, "not a capguard trace");
    expect_error("v 0.1.0 1\ne 1 1 1 cudaFree 0 0\n", 2, "followed by the 'p' record");
    expect_error("v 0.1.0 1\n", 1, "ends before the 'p' record");
    expect_error(kGoodStart + "v 0.1.0 1\n", 3, "a second header");
    expect_error(kGoodStart + "p 1 1 0\n", 3, "a second process record");
    expect_error(kGoodStart + "c a\nc b\n", 4, "a second command record");
    expect_error(kGoodStart + "z 1 0\nz 1 0\n", 4, "a second end record");
  }

  TEST_CASE("a garbage event field names the field, after the good events") {
    RecordingSink sink;
    const ReadError e =
        expect_error(kGoodStart + "e 1 2 3 cudaFree 0 0 st=10\ne 2 2 3 cudaFree 0 0 st=xyz\n", 4,
                     "field value is not lower-case hex: 'st=xyz'", sink);
    CHECK(e.to_string() == "t.trace:4: event record: field value is not lower-case hex: 'st=xyz'");
    CHECK(sink.types == "vpe!");
    expect_error(kGoodStart + "e 1 2 3 cudaFree 0 0 st\n", 3, "not key=hex: 'st'");
    expect_error(kGoodStart + "e 1 2 3 cudaFree 0 0 =5\n", 3, "not key=hex");
    expect_error(kGoodStart + "e 1 2 3 cudaFree 0 0 st=1 st=2\n", 3, "'st' appears twice");
    expect_error(kGoodStart + "e 1 2 3 cudaFree 0 0 \n", 3, "not key=hex: ''");
    expect_error(kGoodStart + "e 1 2 3 cudaFree 0\n", 3, "stack is missing");
    expect_error(kGoodStart + "e 1 2 3\n", 3, "api name is missing");
    expect_error(kGoodStart + "e 1  3 cudaFree 0 0\n", 3, "time is not lower-case hex: ''");
    expect_error(kGoodStart + "e 1 2 3 cudaFree 0 0 st=0X1\n", 3, "not lower-case hex");
    expect_error(kGoodStart + "e 1 2 3 cudaFree 0 0 st=A\n", 3, "not lower-case hex");
    expect_error(kGoodStart + "e1 2 3 cudaFree 0 0\n", 3, "expected a space after the record type");
  }

  TEST_CASE("numbers too large for their field are rejected, not wrapped") {
    expect_error(kGoodStart + "e 10000000000000000 2 3 cudaFree 0 0\n", 3, "seq is out of range");
    expect_error(kGoodStart + "e 1 2 100000000 cudaFree 0 0\n", 3, "tid is out of range");
    expect_error(kGoodStart + "e 1 2 3 cudaFree 100000000 0\n", 3, "result is out of range");
    expect_error(kGoodStart + "e 1 2 3 cudaFree 0 0 sf=100000000\n", 3, "out of range: 'sf=");
    expect_error(kGoodStart + "e 1 2 3 cudaFree 0 0 sb=3\n", 3, "out of range: 'sb=3'");
    expect_error(kGoodStart + "e 1 2 3 cudaFree 0 0 dm=2\n", 3, "out of range: 'dm=2'");
    expect_error(kGoodStart + "e 1 2 3 cudaFree 0 0 nd=10000000000000000\n", 3, "out of range");
    RecordingSink sink;  // leading zeros do not overflow
    REQUIRE_FALSE(
        read_text(kGoodStart + "e 1 2 3 cudaFree 0 0 nd=000000000000000000000ff\n", sink));
    CHECK(sink.events.at(0).nodes == 0xff);
  }

  TEST_CASE("unknown event keys from a newer writer are ignored") {
    RecordingSink sink;
    REQUIRE_FALSE(read_text(kGoodStart + "e 1 2 3 cudaFree 0 0 zz=5 st=9 yy=not-hex\n", sink));
    REQUIRE(sink.events.size() == 1);
    CHECK(sink.events[0].fields == static_cast<uint32_t>(Field::Stream));
    CHECK(sink.events[0].stream == 9);
  }

  TEST_CASE("malformed stack lines are errors; using an undefined stack is not the reader's") {
    expect_error(kGoodStart + "s 0 1000\n", 3, "id 0 is reserved");
    expect_error(kGoodStart + "s 5\n", 3, "no addresses");
    expect_error(kGoodStart + "s 5 \n", 3, "address is not lower-case hex: ''");
    expect_error(kGoodStart + "s 5 12 zz\n", 3, "address is not lower-case hex: 'zz'");
    RecordingSink sink;
    REQUIRE_FALSE(read_text(kGoodStart + "e 1 2 3 cudaFree 0 77\n", sink));
    CHECK(sink.events.at(0).stack == 0x77);
  }

  TEST_CASE("other records are parsed as strictly") {
    expect_error(kGoodStart + "W 1 2\n", 3, "unknown record type 'W'");
    expect_error(kGoodStart + "w 1 2\n", 3, "cuda record: CUPTI major is missing");
    expect_error(kGoodStart + "w 1 2 3 4 dynamic 0  \n", 3, "linkage must be");
    expect_error(kGoodStart + "w 1 2 3 4 shared 0 a b c\n", 3, "unexpected field 'c'");
    expect_error(kGoodStart + "h h 2\n", 3,
                 "who-ran record: launcher variable is not NAME=value: '2'");
    expect_error(kGoodStart + "h h RANK=%zz\n", 3, "bad %-escape: '%zz'");
    expect_error(kGoodStart + "h\n", 3, "who-ran record: host is missing");
    expect_error(kGoodStart + "q step extra\n", 3, "rehearse record: unexpected field");
    expect_error(kGoodStart + "\n", 3, "empty line");
    expect_error(kGoodStart + "c abc%zz\n", 3, "bad %-escape: '%zz'");
    expect_error(kGoodStart + "c abc%4\n", 3, "bad %-escape: '%4'");
    expect_error(kGoodStart + "c\n", 3, "command line is missing");
    expect_error(kGoodStart + "i maybe x\n", 3, "state must be 'ok' or 'failed'");
    expect_error(kGoodStart + "m 1 5 4 /lib.so\n", 3, "start is after end");
    expect_error(kGoodStart + "m 1 2 3 /lib.so XYZ\n", 3, "build id is not lower-case hex");
    expect_error(kGoodStart + "m 1 2 3 /lib.so ab extra\n", 3, "unexpected field 'extra'");
    expect_error(kGoodStart + "x 1\n", 3, "thread-exit record: time is missing");
    expect_error(kGoodStart + "z 1 0 0\n", 3, "end record: unexpected field '0'");
    expect_error(kGoodStart + "r 1 2 3 0  step\n", 3, "range-begin record: range id 0");
    expect_error(kGoodStart + "r 1 2 3 4 dom\n", 3, "range-begin record: name is missing");
    expect_error(kGoodStart + "R 1 2 3 4 x\n", 3, "range-end record: unexpected field 'x'");
  }

  TEST_CASE("records of other threads after the end record are accepted") {
    RecordingSink sink;
    REQUIRE_FALSE(read_text(kGoodStart + "z 5 0\ne 1 2 3 cudaFree 0 0\nx 3 6\n", sink));
    CHECK(sink.types == "vpzex");
  }

  TEST_CASE("an overlong line is an error, not an allocation") {
    const std::string long_line = "c " + std::string(70000, 'a');
    expect_error(kGoodStart + "c ok\n" + long_line + "\n", 4, "line is longer than 65536 bytes");
    expect_error(kGoodStart + long_line, 3, "line is longer than 65536 bytes");
    expect_error(std::string(200000, 'v'), 1, "not a capguard trace");
  }

  TEST_CASE("NUL bytes in a line are named, not swallowed") {
    RecordingSink sink;
    const std::string text = kGoodStart + "e 1 2 3 cudaFree 0 0\n" +
                             std::string("e 1 2 3 cuda\0Free 0 0\n", 22) + "e 1 2 3 cudaFree 0 0\n";
    expect_error(text, 4, "'cuda\\x00Free'", sink);
    CHECK(sink.events.size() == 2);  // the line with the NUL skipped, the one after it read
    expect_error(kGoodStart + std::string("c a\0b\n", 6), 3, "unescaped byte: '\\x00'");
    expect_error(kGoodStart + std::string("\0\0\0\n", 4), 3, "unknown record type '\\x00'");
  }

  TEST_CASE("a trace with too many distinct API names is rejected") {
    std::string text = kGoodStart;
    for (int i = 0; i <= 4096; ++i) text += "e 1 2 3 cudaFake" + std::to_string(i) + " 0 0\n";
    RecordingSink sink;
    expect_error(text, 3 + 4096, "more than 4096 distinct API names", sink);
    CHECK(sink.events.size() == 4096);
  }
}

}  // namespace
}  // namespace capguard::trace
