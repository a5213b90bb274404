// analyze_trace() end to end: a trace written with the real TraceWriter, read back, replayed.
#include "engine/analyzer.h"

#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "trace/writer.h"

using namespace capguard;
using trace::ApiEvent;
using trace::Field;

namespace {

struct ScratchDir {
  std::string path;
  ScratchDir() {
    std::string pattern = std::filesystem::temp_directory_path() / "capguard-analyzer-XXXXXX";
    if (mkdtemp(pattern.data())) path = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove_all(path, ignored);
  }
};

ApiEvent event(uint64_t seq, uint32_t tid, const char* api, int result = 0) {
  ApiEvent e;
  e.seq = seq;
  e.time_ns = 1000 + seq;
  e.tid = tid;
  e.api = api;
  e.result = result;
  return e;
}
ApiEvent on_stream(ApiEvent e, uint64_t stream) {
  e.stream = stream;
  e.set(Field::Stream);
  return e;
}

// A program that captures a non-blocking stream and does a synchronous cudaMemcpy inside it.
std::string write_escaped_copy_trace(const std::string& dir, bool clean_exit) {
  trace::TraceWriter w;
  REQUIRE(w.open(dir.c_str(), 77, 1, 123456789));
  w.write_command("./app --steps 3");
  w.write_attach(true, "CUPTI subscribed");
  w.write_module(0x400000, 0x400000, 0x500000, "/opt/app/bin/app", "abcd");
  const uint64_t begin_stack[] = {0x7f0000001000, 0x401234};
  const uint64_t copy_stack[] = {0x7f0000002000, 0x401300, 0x401400};
  ApiEvent create = on_stream(event(1, 9, "cudaStreamCreateWithFlags"), 0x5501);
  create.flags = 1;
  create.set(Field::Flags);
  w.write_event(create);
  ApiEvent begin = on_stream(event(2, 9, "cudaStreamBeginCapture"), 0x5501);
  begin.mode = trace::CaptureMode::Global;
  begin.set(Field::Mode);
  begin.stack = 1;
  w.write_event(begin, begin_stack, 2);
  w.write_event(on_stream(event(3, 9, "cudaLaunchKernel"), 0x5501));
  ApiEvent copy = event(4, 9, "cudaMemcpy");
  copy.stack = 2;
  w.write_event(copy, copy_stack, 3);
  ApiEvent end = on_stream(event(5, 9, "cudaStreamEndCapture"), 0x5501);
  end.nodes = 1;
  end.set(Field::Nodes);
  end.stack = 1;  // same stack id reused: no redefinition needed
  w.write_event(end);
  w.write_thread_exit(9, 2000);
  if (clean_exit) w.write_end(3000, 0);
  return w.path();
}

}  // namespace

TEST_CASE("analyze_trace: process, captures, findings and stacks from a written trace") {
  ScratchDir dir;
  REQUIRE_FALSE(dir.path.empty());
  std::string path = write_escaped_copy_trace(dir.path, true);
  Analysis analysis;
  analyze_trace(path, analysis);
  CHECK(analysis.errors.empty());
  const Report& r = analysis.report;
  REQUIRE(r.processes.size() == 1);
  CHECK(r.processes[0].pid == 77u);
  CHECK(r.processes[0].command == "./app --steps 3");
  CHECK(r.processes[0].attached);
  CHECK(r.processes[0].attach_message == "CUPTI subscribed");
  CHECK(r.processes[0].trace_path == path);
  REQUIRE(r.captures.size() == 1);
  CHECK(r.captures[0].status == CaptureState::Ok);
  CHECK(r.captures[0].nodes == uint64_t{1});
  CHECK(r.captures[0].begin.addresses == std::vector<uint64_t>{0x7f0000001000, 0x401234});
  REQUIRE(r.findings.size() == 1);
  const Finding& f = r.findings[0];
  CHECK(f.rule == "escaped-sync-copy");
  CHECK(f.pid == 77u);
  CHECK(f.thread == 9u);
  CHECK(f.location.pid == 77u);
  CHECK(f.location.addresses == std::vector<uint64_t>{0x7f0000002000, 0x401300, 0x401400});
  REQUIRE(analysis.modules.size() == 1);
  CHECK(analysis.modules[0].pid == 77u);
  const Module* m = analysis.modules[0].find(0x401300);
  REQUIRE(m);
  CHECK(m->path == "/opt/app/bin/app");
  CHECK(analysis.modules[0].find(0x7f0000002000) == nullptr);
}

TEST_CASE("analyze_trace: the pytest plugin's marks beside the trace name each finding's test") {
  ScratchDir dir;
  const std::string path = write_escaped_copy_trace(dir.path, true);  // the copy: seq 4, 1004 ns
  std::ofstream(path.substr(0, path.size() - 6) + ".tests")
      << "capguard-test-begin 990 77 t.py::test_clean\n"
         "capguard-test-end 1002 77 t.py::test_clean\n"
         "capguard-test-begin 1003 77 t.py::test_copies\n"
         "capguard-test-end 1010 77 t.py::test_copies\n"
         "capguard-test-begin 1020 77 t.py::test_after\n";  // never ended: the process died
  Analysis analysis;
  analyze_trace(path, analysis);
  const Report& r = analysis.report;
  REQUIRE(r.processes.size() == 1);
  CHECK(r.processes[0].tests ==
        std::vector<std::string>{"t.py::test_clean", "t.py::test_copies", "t.py::test_after"});
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].rule == "escaped-sync-copy");
  CHECK(r.findings[0].test == "t.py::test_copies");
}

TEST_CASE("analyze_trace: a finding between two tests belongs to none") {
  ScratchDir dir;
  const std::string path = write_escaped_copy_trace(dir.path, true);
  std::ofstream(path.substr(0, path.size() - 6) + ".tests")
      << "capguard-test-begin 990 77 t.py::test_clean\n"
         "capguard-test-end 1002 77 t.py::test_clean\n"
         "capguard-test-begin 1005 78 t.py::other_process\n";  // another pid: ignored
  Analysis analysis;
  analyze_trace(path, analysis);
  REQUIRE(analysis.report.findings.size() == 1);
  CHECK(analysis.report.findings[0].test.empty());
  CHECK(analysis.report.processes[0].tests == std::vector<std::string>{"t.py::test_clean"});
}

TEST_CASE("analyze_trace: two traces append; capture ids stay unique") {
  ScratchDir a, b;
  Analysis analysis;
  analyze_trace(write_escaped_copy_trace(a.path, true), analysis);
  analyze_trace(write_escaped_copy_trace(b.path, false), analysis);
  REQUIRE(analysis.report.captures.size() == 2);
  CHECK(analysis.report.captures[0].id == 1u);
  CHECK(analysis.report.captures[1].id == 2u);
  REQUIRE(analysis.report.findings.size() == 2);
  CHECK(analysis.report.findings[1].capture == 2u);
  CHECK(analysis.report.processes.size() == 2);
}

TEST_CASE("analyze_trace: a damaged trace keeps what was read and reports the damage") {
  ScratchDir dir;
  std::string path = write_escaped_copy_trace(dir.path, false);
  {
    std::ofstream out(path, std::ios::app);
    out << "q this is not a record\n";
  }
  Analysis analysis;
  analyze_trace(path, analysis);
  CHECK(analysis.errors.empty());  // one bad line does not end the trace
  REQUIRE(analysis.skipped_lines.size() == 1);
  CHECK(analysis.skipped_lines[0].source == path);
  CHECK(analysis.report.processes.size() == 1);
  CHECK(analysis.report.findings.size() == 1);
}

TEST_CASE("analyze_trace: a missing trace is an error and no process") {
  Analysis analysis;
  analyze_trace("/nonexistent/capguard.1.trace", analysis);
  CHECK(analysis.errors.size() == 1);
  CHECK(analysis.report.processes.empty());
  CHECK(analysis.modules.empty());
}

TEST_CASE("analyze_trace: the CUDA the process ran ('w', format 7) reaches the report's header") {
  ScratchDir dir;
  REQUIRE_FALSE(dir.path.empty());
  trace::TraceWriter w;
  REQUIRE(w.open(dir.path.c_str(), 78, 1, 123456789));
  w.write_cuda(12040, 13000, 12, 28, "static", 0, "/opt/app/bin/app",
               "/usr/local/cuda-12.4/lib64/libcupti.so.12");
  w.write_attach(true, "cupti");
  w.write_end(3000, 0);
  Analysis analysis;
  analyze_trace(w.path(), analysis);
  REQUIRE(analysis.report.processes.size() == 1);
  const CudaInfo& cuda = analysis.report.processes[0].cuda;
  CHECK(cuda.recorded);
  CHECK(cuda.runtime == 12040u);
  CHECK(cuda.linkage == "static");
  CHECK(cuda.cupti_path == "/usr/local/cuda-12.4/lib64/libcupti.so.12");
  CHECK(cuda_info_text(cuda) ==
        "CUDA 12.4 runtime (static cudart), driver 13.0, CUPTI 12 (API 28)");
  CudaInfo mixed = cuda;
  mixed.runtime = 13000, mixed.linkage = "shared", mixed.other_runtime = 12000;
  CHECK(
      cuda_info_text(mixed) ==
      "CUDA 13.0 runtime (shared cudart) and a CUDA 12.0 runtime, driver 13.0, CUPTI 12 (API 28)");
  CHECK(cuda_info_text(CudaInfo{}) ==
        "no CUDA runtime found (driver API), driver unknown, no CUPTI");
}
