#include "symbolize/symbolizer.h"

#include <doctest/doctest.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "tests/this_process.h"
#include "tests/trace_recording_sink.h"

namespace capguard {
namespace {

[[gnu::noinline]] uint64_t return_address_of_this_call() {
  return reinterpret_cast<uint64_t>(__builtin_return_address(0));
}

// Stands in for the program's culprit call: records its own return address, like a stack
// captured inside a CUDA call.
int g_culprit_line = 0;
[[gnu::noinline]] uint64_t user_code_calling_cuda() {
  g_culprit_line = __LINE__ + 1;
  const uint64_t address = return_address_of_this_call();
  asm volatile("" ::: "memory");  // keeps the call from becoming a tail call
  return address;
}

// Library code inlined into the user's function, as Thrust's is in an optimized build: the
// return address lies in outer_calling_inlined_code, in code of inlined_library_code.
int g_inlined_line = 0, g_outer_line = 0;
[[gnu::always_inline]] inline uint64_t inlined_library_code() {
  g_inlined_line = __LINE__ + 1;
  const uint64_t address = return_address_of_this_call();
  asm volatile("" ::: "memory");
  return address;
}
[[gnu::noinline]] uint64_t outer_calling_inlined_code() {
  g_outer_line = __LINE__ + 1;
  const uint64_t address = inlined_library_code();
  asm volatile("" ::: "memory");
  return address;
}

Report report_with_one_finding(uint64_t address) {
  Report report;
  Finding finding;
  finding.pid = static_cast<uint32_t>(getpid());
  finding.location.addresses = {address};
  report.findings.push_back(finding);
  return report;
}

// The tests of lines and inline scopes read this executable's DWARF. CMakeLists.txt compiles
// this file with -g in every configuration; an executable stripped or built without it says
// so and skips them rather than failing on a missing line.
bool has_line_info() {
  static const bool known = [] {
    Report report = report_with_one_finding(user_code_calling_cuda());
    symbolize(report, {modules_of_this_process()});
    const auto& frames = report.findings[0].location.frames;
    return !frames.empty() && frames[0].line != 0;
  }();
  if (!known)
    MESSAGE("skipped: this test executable has no debug line information (build it with -g)");
  return known;
}

}  // namespace

TEST_CASE("a return address in the program resolves to the calling function and its line") {
  if (!has_line_info()) return;
  Report report = report_with_one_finding(user_code_calling_cuda());
  symbolize(report, {modules_of_this_process()});

  const Location& location = report.findings[0].location;
  REQUIRE(location.frames.size() == 1);
  const Frame& frame = location.frames[0];
  CHECK(frame.function == "capguard::(anonymous namespace)::user_code_calling_cuda()");
  CHECK(frame.file.ends_with("tests/symbolizer_test.cpp"));
  CHECK(frame.line == g_culprit_line);
  CHECK(frame.module == executable_path());
  CHECK(location.user_frame == 0);
}

TEST_CASE("a module file that no longer exists keeps module and offset, without names") {
  const uint64_t address = user_code_calling_cuda();
  ProcessModules process = modules_of_this_process();
  for (auto& module : process.modules)
    module.path = "/nonexistent/gone/" + std::to_string(module.base);
  Report report = report_with_one_finding(address);
  symbolize(report, {process});

  const Frame& frame = report.findings[0].location.frames.at(0);
  CHECK(frame.module.starts_with("/nonexistent/gone/"));
  CHECK(frame.offset != 0);
  CHECK(frame.function.empty());
  CHECK(frame.file.empty());
  CHECK(frame.line == 0);
}

TEST_CASE("a module rebuilt since the trace (build-id differs) is not trusted for names") {
  const uint64_t address = user_code_calling_cuda();
  ProcessModules process = modules_of_this_process();
  for (auto& module : process.modules) module.build_id = "00112233445566778899aabbccddeeff00112233";
  Report report = report_with_one_finding(address);
  symbolize(report, {process});

  const Frame& frame = report.findings[0].location.frames.at(0);
  CHECK(frame.module == executable_path());
  CHECK(frame.function.empty());
  CHECK(frame.line == 0);
}

TEST_CASE("overlapping module records: the later one maps the address, in find() and symbolize") {
  ProcessModules process;
  process.pid = static_cast<uint32_t>(getpid());
  process.modules.push_back({0x10000, 0x10000, 0x30000, "/nonexistent/closed.so", ""});
  process.modules.push_back({0x20000, 0x20000, 0x40000, "/nonexistent/reloaded.so", ""});
  CHECK(process.find(0x18000)->path == "/nonexistent/closed.so");
  CHECK(process.find(0x28000)->path == "/nonexistent/reloaded.so");  // both map it
  CHECK(process.find(0x40000) == nullptr);

  Report report = report_with_one_finding(0x28001);  // a return address: looked up at 0x28000
  symbolize(report, {process});
  CHECK(report.findings[0].location.frames.at(0).module == "/nonexistent/reloaded.so");
}

TEST_CASE("module lookup: the index agrees with the newest record that maps the address") {
  // Random overlapping records, looked up against the linear rule (the later record wins).
  uint64_t seed = 12345;
  auto next = [&] { return (seed = seed * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  for (int round = 0; round < 20; ++round) {
    ProcessModules process;
    const int n = 1 + static_cast<int>(next() % 60);
    for (int i = 0; i < n; ++i) {
      const uint64_t start = next() % 1000, size = next() % 200;  // size 0: maps nothing
      process.modules.push_back({start, start, start + size, "/m" + std::to_string(i), ""});
    }
    for (uint64_t a = 0; a < 1300; ++a) {
      const Module* expected = nullptr;
      for (auto it = process.modules.rbegin(); it != process.modules.rend(); ++it)
        if (a >= it->start && a < it->end) {
          expected = &*it;
          break;
        }
      CAPTURE(round);
      CAPTURE(a);
      REQUIRE(process.find(a) == expected);
    }
    process.modules.push_back({0, 0, 2000, "/all", ""});  // grown: the index is made again
    CHECK(process.find(5)->path == "/all");
  }
}

TEST_CASE("an address outside every module and a process without a module map do not crash") {
  Report report = report_with_one_finding(0x10);
  report.findings[0].related.push_back({"capture-begin", "", {}});
  report.findings[0].related[0].location.addresses = {0, 0x20};
  symbolize(report, {modules_of_this_process()});
  CHECK(report.findings[0].location.frames.at(0).module.empty());
  CHECK(report.findings[0].location.user_frame == -1);
  CHECK(report.findings[0].related[0].location.frames.size() == 2);

  Report other = report_with_one_finding(user_code_calling_cuda());
  symbolize(other, {});
  CHECK(other.findings[0].location.frames.at(0).function.empty());
}

TEST_CASE("captures' begin and end locations are symbolized too") {
  if (!has_line_info()) return;
  Report report;
  CaptureInfo capture;
  capture.pid = static_cast<uint32_t>(getpid());
  capture.begin.addresses = {user_code_calling_cuda()};
  capture.end = Location{};
  capture.end->addresses = {user_code_calling_cuda()};
  report.captures.push_back(capture);
  symbolize(report, {modules_of_this_process()});
  CHECK(report.captures[0].begin.frames.at(0).line == g_culprit_line);
  CHECK(report.captures[0].end->frames.at(0).line == g_culprit_line);
}

Frame frame_in(const char* module, const char* function) {
  Frame frame;
  frame.module = module;
  frame.function = function;
  return frame;
}

TEST_CASE("the user frame skips capguard, CUDA (shared and static cudart) and the C runtime") {
  const std::vector<Frame> frames = {
      frame_in("/opt/capguard/lib/libcapguard.so", "capguard::on_callback"),
      frame_in("/usr/lib/x86_64-linux-gnu/libcuda.so.1", ""),
      frame_in("/home/me/app", "cudart::cudaApiStreamSynchronize(CUstream_st*)"),
      frame_in("/home/me/app", "cudaStreamSynchronize"),
      frame_in("/home/me/app", "cuStreamSynchronize"),
      frame_in("/usr/lib/x86_64-linux-gnu/libcudart.so.13", "cudaMalloc"),
      frame_in("/home/me/app", "train_step(float*)"),
      frame_in("/usr/lib/x86_64-linux-gnu/libc.so.6", "__libc_start_main"),
  };
  CHECK(choose_user_frame(frames) == 6);
  CHECK(owner_of(frames[0]) == FrameOwner::Interposer);
  CHECK(owner_of(frames[7]) == FrameOwner::Runtime);
  CHECK(owner_of(frame_in("/home/me/app", "cumulative_sum(int)")) == FrameOwner::Program);
  CHECK(choose_user_frame({frames[0], frames[1], frames[7]}) == -1);
}

TEST_CASE("code inlined at a return address gives a frame per inlined call, innermost first") {
  if (!has_line_info()) return;
  const uint64_t address = outer_calling_inlined_code();
  Report report = report_with_one_finding(address);
  symbolize(report, {modules_of_this_process()});
  const auto& frames = report.findings[0].location.frames;
  REQUIRE(frames.size() == 2);
  CHECK(frames[0].function.find("inlined_library_code") != std::string::npos);
  CHECK(frames[0].line == g_inlined_line);
  CHECK(frames[1].function == "capguard::(anonymous namespace)::outer_calling_inlined_code()");
  CHECK(frames[1].line == g_outer_line);
  CHECK(frames[1].file.ends_with("tests/symbolizer_test.cpp"));
  CHECK(frames[0].address == address);
  CHECK(frames[1].address == address);

  // The symbol cache keeps both, in order, for re-analysis where the binary is not.
  trace::testing::TempDir dir;
  const std::string trace = dir.path() + "/capguard.1.trace";
  report.findings[0].pid = 1;
  REQUIRE_FALSE(SymbolCache::save_beside(trace, 1, report));
  SymbolCache cache;
  REQUIRE_FALSE(cache.load_beside(trace));
  const std::vector<Frame>* known = cache.find(1, address);
  REQUIRE(known != nullptr);
  REQUIRE(known->size() == 2);
  CHECK((*known)[0].line == g_inlined_line);
  CHECK((*known)[1].line == g_outer_line);
  Report elsewhere = report_with_one_finding(address);
  elsewhere.findings[0].pid = 1;
  symbolize(elsewhere, {}, &cache);
  CHECK(elsewhere.findings[0].location.frames.size() == 2);
}

template <int N>
[[gnu::always_inline]] inline uint64_t deeply_inlined() {
  uint64_t address;
  if constexpr (N == 0) {
    address = return_address_of_this_call();
  } else {
    address = deeply_inlined<N - 1>();
  }
  asm volatile("" ::: "memory");  // a scope of its own at every level, and no tail call
  return address;
}
[[gnu::noinline]] uint64_t outer_of_deep_inlining() {
  return deeply_inlined<kMaxInlineDepth + 16>();
}
// The depth counts every DIE that holds the address, and GCC for aarch64 gives each level here a
// lexical block besides its inlined call (x86-64: none), so shallow is well below half the limit.
[[gnu::noinline]] uint64_t outer_of_shallow_inlining() {
  return deeply_inlined<kMaxInlineDepth / 4>();
}

TEST_CASE("inline scopes nested deeper than kMaxInlineDepth: only the outer function, counted") {
  if (!has_line_info()) return;
  Report deep = report_with_one_finding(outer_of_deep_inlining());
  const SymbolizeStats stats = symbolize(deep, {modules_of_this_process()});
  CHECK(stats.deep_inline_addresses == 1);
  REQUIRE(deep.findings[0].location.frames.size() == 1);
  CHECK(deep.findings[0].location.frames[0].function.find("outer_of_deep_inlining") !=
        std::string::npos);
  // Below the depth, every inlined call is a frame as before.
  Report shallow = report_with_one_finding(outer_of_shallow_inlining());
  CHECK(symbolize(shallow, {modules_of_this_process()}).deep_inline_addresses == 0);
  CHECK(shallow.findings[0].location.frames.size() >= 2);  // its inlined calls shown
}

TEST_CASE("frames already present and no addresses: only the user frame is chosen") {
  Report report;
  Finding finding;
  finding.location.frames = {frame_in("/usr/lib/libcuda.so.1", ""), frame_in("/app", "main")};
  report.findings.push_back(finding);
  symbolize(report, {});
  CHECK(report.findings[0].location.frames.size() == 2);
  CHECK(report.findings[0].location.user_frame == 1);
}

TEST_CASE("a <<<>>> launch: the user frame is the launch line, not nvcc's stub or wrapper") {
  // The frames recorded on the H100 for testcases/legacy_stream_during_capture_chevron.cu.
  std::vector<Frame> frames = {
      frame_in("/usr/local/nvidia/lib64/libcuda.so.1", ""),
      frame_in("/build/chevron", "cudaLaunchKernel"),
      frame_in("/build/chevron", "__cudaLaunchKernel_helper(CUkern_st*, dim3, dim3, void**)"),
      frame_in("/build/chevron", "__device_stub__Z4bumpPi(int*)"),
      frame_in("/build/chevron", "bump(int*)"),
      frame_in("/build/chevron", "main"),
  };
  frames[3].file = "/tmp/tmpxft_00000403_00000000-6_chevron.cudafe1.stub.c";
  frames[4].file = "/work/main/testcases/common.h";
  CHECK(choose_user_frame(frames) == 5);

  // A wrapper that does not match the stub's kernel is the user's own code.
  frames[4].function = "launch_all(int*)";
  CHECK(choose_user_frame(frames) == 4);
}

TEST_CASE("two processes that share a pid (two hosts) are symbolized with their own modules") {
  const uint64_t address = user_code_calling_cuda();
  ProcessModules here = modules_of_this_process();
  ProcessModules elsewhere = here;  // the same pid on another host: other files mapped
  for (auto& module : elsewhere.modules) module.path = "/other/host/" + std::to_string(module.base);
  here.process = 1;
  elsewhere.process = 2;
  Report report = report_with_one_finding(address);
  report.findings[0].process = 2;
  report.findings.push_back(report.findings[0]);
  report.findings[1].process = 1;
  symbolize(report, {here, elsewhere});

  CHECK(report.findings[0].location.frames.at(0).module.starts_with("/other/host/"));
  CHECK(report.findings[1].location.frames.at(0).module == executable_path());
}

}  // namespace capguard

namespace capguard {

TEST_CASE("a module record naming a FIFO or a directory is not opened: no hang, no names") {
  const uint64_t address = user_code_calling_cuda();
  char dir[] = "/tmp/capguard-symfifo-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string fifo = std::string(dir) + "/module.so";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& path : {fifo, std::string(dir)}) {
    ProcessModules process = modules_of_this_process();
    for (auto& module : process.modules) module.path = path;
    Report report = report_with_one_finding(address);
    symbolize(report, {process});  // blocked forever in open() before
    const Frame& frame = report.findings[0].location.frames.at(0);
    CHECK(frame.module == path);
    CHECK(frame.function.empty());
    CHECK(frame.file.empty());
  }
  unlink(fifo.c_str());
  rmdir(dir);
}

}  // namespace capguard
