// Format version 2: Python frames ('y' records) and stacks that name them after their native
// addresses. Written by TraceWriter, read back unchanged; damaged lines give clear errors;
// version 1 traces still read.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/trace_recording_sink.h"
#include "trace/writer.h"

namespace capguard::trace {
namespace {

using testing::TempDir;

struct PythonSink : testing::RecordingSink {
  struct Frame {
    uint32_t id, line;
    std::string file, function;
  };
  std::vector<Frame> python_frames;
  std::map<uint32_t, std::vector<uint32_t>> stack_python;

  void on_python_frame(const PythonFrameRecord& f) override {
    python_frames.push_back({f.id, f.line, std::string(f.file), std::string(f.function)});
    types += 'y';
  }
  void on_stack(const StackRecord& s) override {
    RecordingSink::on_stack(s);
    stack_python[s.id].assign(s.python_frames.begin(), s.python_frames.end());
  }
};

std::optional<ReadError> read_text(const std::string& text, PythonSink& sink) {
  std::istringstream in(text);
  auto error = read_trace(in, "t.trace", sink);
  if (!sink.skipped.empty()) return sink.skipped.front();  // a damaged line, skipped
  return error;
}

void expect_error(const std::string& text, uint64_t line, const std::string& part) {
  PythonSink sink;
  const auto error = read_text(text, sink);
  REQUIRE(error.has_value());
  CAPTURE(error->to_string());
  CHECK(error->line == line);
  CHECK(error->message.find(part) != std::string::npos);
}

const std::string kStart = "v 0.1.0 2\np 10 1 0\n";

TEST_SUITE("trace python frames") {
  TEST_CASE("python frames and a mixed stack survive the round trip, in order") {
    TempDir dir;
    TraceWriter writer;
    REQUIRE(writer.open(dir.path().c_str(), 77, 1, 0));
    writer.write_python_frame(1, 42, "/home/me/train step.py", "Model.forward");
    writer.write_python_frame(2, 0, "<frozen runpy>", "_run_code");
    const uint64_t native[] = {0x7f0000001234, 0x401000};
    const uint32_t python[] = {1, 2};
    ApiEvent e;
    e.api = "cudaStreamSynchronize";
    e.stack = 5;
    writer.write_event(e, native, 2, python, 2);
    ApiEvent python_only = e;
    python_only.stack = 6;
    writer.write_event(python_only, nullptr, 0, python, 1);
    const std::string path = writer.path();
    writer.abandon();

    PythonSink sink;
    const auto error = read_trace(path, sink);
    REQUIRE_MESSAGE(!error, error->to_string());
    CHECK(sink.format_version == trace::kFormatVersion);
    CHECK(sink.types == "vpyysese");
    REQUIRE(sink.python_frames.size() == 2);
    CHECK(sink.python_frames[0].file == "/home/me/train step.py");
    CHECK(sink.python_frames[0].function == "Model.forward");
    CHECK(sink.python_frames[0].line == 42);
    CHECK(sink.python_frames[1].file == "<frozen runpy>");
    CHECK(sink.stacks[5] == std::vector<uint64_t>{0x7f0000001234, 0x401000});
    CHECK(sink.stack_python[5] == std::vector<uint32_t>{1, 2});
    CHECK(sink.stacks[6].empty());
    CHECK(sink.stack_python[6] == std::vector<uint32_t>{1});
    CHECK(sink.events[1].stack == 6);
  }

  TEST_CASE("a stack without python frames is written as in version 1") {
    PythonSink sink;
    REQUIRE(!read_text(kStart + "s 1 a b\ne 1 1 1 cudaFree 0 1\n", sink));
    CHECK(sink.stacks[1] == std::vector<uint64_t>{0xa, 0xb});
    CHECK(sink.stack_python[1].empty());
  }

  TEST_CASE("version 1 traces still read") {
    PythonSink sink;
    REQUIRE(!read_text("v 0.1.0 1\np 10 1 0\ns 1 a\ne 1 1 1 cudaFree 0 1\n", sink));
    CHECK(sink.format_version == 1);
    CHECK(sink.types == "vpse");
  }

  TEST_CASE("a very long python file name is cut, and the function still fits whole") {
    TempDir dir;
    TraceWriter writer;
    REQUIRE(writer.open(dir.path().c_str(), 78, 1, 0));
    writer.write_python_frame(3, 7, std::string(20000, '%'), "f");
    const std::string path = writer.path();
    writer.abandon();
    PythonSink sink;
    const auto error = read_trace(path, sink);
    REQUIRE_MESSAGE(!error, error->to_string());
    REQUIRE(sink.python_frames.size() == 1);
    CHECK(sink.python_frames[0].function == "f");
    CHECK(sink.python_frames[0].file.size() > 100);
    CHECK(sink.python_frames[0].file.find_first_not_of('%') == std::string::npos);
  }

  TEST_CASE("malformed python frame records are named") {
    expect_error(kStart + "y 0 1 a.py f\n", 3, "python-frame record: id 0 is reserved");
    expect_error(kStart + "y 1 1 a.py\n", 3, "python-frame record: function is missing");
    expect_error(kStart + "y 1 zz a.py f\n", 3, "line is not lower-case hex");
    expect_error(kStart + "y 1 1 a%2.py f\n", 3, "file has a bad %-escape");
    expect_error(kStart + "y 1 1 a.py f extra\n", 3, "unexpected field");
    expect_error(kStart + "y 1 100000000 a.py f\n", 3, "line is out of range");
  }

  TEST_CASE("malformed python parts of a stack are named") {
    expect_error(kStart + "s 1 a y\n", 3, "no python frames after 'y'");
    expect_error(kStart + "s 1 y 0\n", 3, "python frame id 0 is reserved");
    expect_error(kStart + "s 1 a y 1 y 2\n", 3, "python frame id is not lower-case hex");
    expect_error(kStart + "s 1 a y 100000000\n", 3, "python frame id is out of range");
    expect_error(kStart + "s 1 yy\n", 3, "address is not lower-case hex");
    expect_error(kStart + "s 1\n", 3, "no addresses");
  }
}

}  // namespace
}  // namespace capguard::trace
