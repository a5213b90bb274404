#include "symbolize/symbol_cache.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "symbolize/symbolizer.h"

namespace capguard {
namespace {

std::string temp_trace_path() {
  char dir[] = "/tmp/capguard-symcache-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  return std::string(dir) + "/capguard.77.trace";
}

Frame resolved(uint64_t address, const char* module, const char* function, const char* file,
               int line) {
  Frame frame;
  frame.address = address;
  frame.module = module;
  frame.function = function;
  frame.file = file;
  frame.line = line;
  return frame;
}

// A finding recorded on the GPU machine: raw addresses, binaries long gone.
Report report_with_raw_stack(uint32_t pid) {
  Report report;
  Finding finding;
  finding.pid = pid;
  finding.location.pid = pid;
  finding.location.addresses = {0x7f0000001000, 0x401234, 0x401300};
  report.findings.push_back(finding);
  return report;
}

}  // namespace

TEST_SUITE("symbol_cache") {
  TEST_CASE("two traces of one pid (two hosts, one directory) keep their own frames") {
    std::string traces[2];
    for (int host = 0; host < 2; ++host) {
      traces[host] = temp_trace_path();
      Report recorded;
      Finding finding;
      finding.pid = 77;
      finding.location.frames = {resolved(0x401234, "/gpu-build/app", host == 0 ? "on_a" : "on_b",
                                          "/src/app.cu", 12 + host)};
      recorded.findings.push_back(finding);
      REQUIRE_FALSE(SymbolCache::save_beside(traces[host], 77, recorded).has_value());
    }
    SymbolCache cache;
    REQUIRE_FALSE(cache.load_beside(traces[0], 1).has_value());
    REQUIRE_FALSE(cache.load_beside(traces[1], 2).has_value());
    for (uint32_t process : {1u, 2u}) {
      const std::vector<Frame>* frames = cache.find(process, 77, 0x401234);
      REQUIRE(frames != nullptr);
      REQUIRE(frames->size() == 1);  // not one per trace of that pid
      CHECK(frames->at(0).function == (process == 1 ? "on_a" : "on_b"));
    }
    Report replayed = report_with_raw_stack(77);
    replayed.findings[0].process = 2;
    replayed.findings[0].location.addresses = {0x401234};
    symbolize(replayed, {}, &cache);
    REQUIRE(replayed.findings[0].location.frames.size() == 1);
    CHECK(replayed.findings[0].location.frames[0].function == "on_b");
  }

  TEST_CASE("frames saved beside a trace symbolize it on a machine without the binaries") {
    const std::string trace = temp_trace_path();
    Report recorded;
    Finding finding;
    finding.pid = 77;
    finding.location.frames = {
        resolved(0x7f0000001000, "/usr/lib/libcuda.so.1", "", "", 0),
        resolved(0x401234, "/gpu-build/app", "main", "/src/app.cu", 12),
        resolved(0x401300, "/gpu-build/app", "helper(int)", "/src/app.cu", 30)};
    recorded.findings.push_back(finding);
    REQUIRE_FALSE(SymbolCache::save_beside(trace, 77, recorded).has_value());

    SymbolCache cache;
    REQUIRE_FALSE(cache.load_beside(trace).has_value());
    CHECK(cache.size() == 2);  // the frame with nothing resolved is not worth keeping

    Report replayed = report_with_raw_stack(77);
    symbolize(replayed, {}, &cache);
    const Location& location = replayed.findings[0].location;
    REQUIRE(location.frames.size() == 3);
    CHECK(location.frames[1].function == "main");
    CHECK(location.frames[1].file == "/src/app.cu");
    CHECK(location.frames[1].line == 12);
    CHECK(location.user_frame == 1);

    // Another process's addresses are not confused with these.
    Report other = report_with_raw_stack(78);
    symbolize(other, {}, &cache);
    CHECK(other.findings[0].location.frames[1].function.empty());
    CHECK(other.findings[0].location.user_frame == -1);
  }

  TEST_CASE("no cache file is not an error; a damaged one says where") {
    const std::string trace = temp_trace_path();
    SymbolCache cache;
    CHECK_FALSE(cache.load_beside(trace).has_value());

    std::ofstream(trace + ".symbols") << "capguard-symbols\t1\n4d\t401234\t12\tapp\tmain\n";
    auto error = cache.load_beside(trace);
    REQUIRE(error.has_value());
    CHECK(error->find(":2: malformed frame") != std::string::npos);

    std::ofstream(trace + ".symbols") << "capguard-symbols\t9\n";
    error = cache.load_beside(trace);
    REQUIRE(error.has_value());
    CHECK(error->find(":1: not a capguard symbol cache") != std::string::npos);
  }

  TEST_CASE("a .symbols that is a FIFO is refused without blocking, and never written through") {
    const std::string trace = temp_trace_path();
    REQUIRE(mkfifo((trace + ".symbols").c_str(), 0600) == 0);
    SymbolCache cache;
    auto error = cache.load_beside(trace);  // blocked forever in open() before
    REQUIRE(error.has_value());
    CHECK(error->find("not a regular file") != std::string::npos);
    // Nor is a FIFO written through.
    Report report;
    error = SymbolCache::save_beside(trace, 77, report);
    REQUIRE(error.has_value());
    CHECK(error->find("not a regular file") != std::string::npos);
    unlink((trace + ".symbols").c_str());
  }

  TEST_CASE("a planted symlink named <trace>.symbols is neither followed nor its target touched") {
    const std::string trace = temp_trace_path();
    const std::string victim = trace + ".victim";
    std::ofstream(victim) << "precious\n";
    REQUIRE(symlink(victim.c_str(), (trace + ".symbols").c_str()) == 0);
    Report recorded;
    Finding finding;
    finding.pid = 77;
    finding.location.frames = {resolved(0x401234, "/gpu-build/app", "main", "/src/app.cu", 12)};
    recorded.findings.push_back(finding);
    const auto error = SymbolCache::save_beside(trace, 77, recorded);
    REQUIRE(error.has_value());
    std::ifstream in(victim);
    std::string content;
    std::getline(in, content);
    CHECK(content == "precious");
    // A regular file is replaced whole (a new file renamed over it), not written in place.
    unlink((trace + ".symbols").c_str());
    std::ofstream(trace + ".symbols") << "old\n";
    REQUIRE_FALSE(SymbolCache::save_beside(trace, 77, recorded).has_value());
    SymbolCache cache;
    REQUIRE_FALSE(cache.load_beside(trace).has_value());
    CHECK(cache.size() == 1);
  }
}

}  // namespace capguard
