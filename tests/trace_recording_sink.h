// A TraceSink that keeps copies of everything it receives, and a temporary directory, for the
// trace_* tests.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "trace/reader.h"

namespace capguard::trace::testing {

// The value of optional field `index` (a FieldIndex) as it would be written, whether set or not.
inline uint64_t field_value(const ApiEvent& e, int index) {
  switch (index) {
#define CAPGUARD_EVENT_FIELD(Name, key, member, ...) \
  case kField##Name:                                 \
    return static_cast<uint64_t>(e.member);
#include "trace/event_fields.def"
    default:
      return 0;
  }
}

// Every member of two events compared, optional fields by value whether set or not.
inline void check_same_event(const ApiEvent& got, const ApiEvent& want) {
  CHECK(got.seq == want.seq);
  CHECK(got.time_ns == want.time_ns);
  CHECK(got.tid == want.tid);
  CHECK(got.api == want.api);
  CHECK(got.result == want.result);
  CHECK(got.stack == want.stack);
  CHECK(got.fields == want.fields);
  for (int f = 0; f < kFieldCount; ++f) {
    CAPTURE(kFieldKeys[f]);
    CHECK(field_value(got, f) == field_value(want, f));
  }
}

struct RecordedModule {
  uint64_t base = 0, start = 0, end = 0;
  std::string path, build_id;
};

struct RecordingSink : TraceSink {
  std::string tool_version;
  int format_version = -1;
  ProcessRecord process;
  std::vector<std::string> commands;
  std::vector<std::pair<bool, std::string>> attaches;
  std::vector<RecordedModule> modules;
  std::map<uint32_t, std::vector<uint64_t>> stacks;
  std::vector<ApiEvent> events;  // api points into the reader's interned names
  std::vector<std::pair<uint32_t, uint64_t>> thread_exits;
  std::vector<std::pair<uint64_t, int>> ends;
  std::string types;  // record type characters in the order received
  uint64_t stack_redefinitions = 0;

  void on_header(std::string_view v, int f) override {
    tool_version = v;
    format_version = f;
    types += 'v';
  }
  void on_process(const ProcessRecord& p) override {
    process = p;
    types += 'p';
  }
  void on_command(std::string_view c) override {
    commands.emplace_back(c);
    types += 'c';
  }
  struct Cuda {
    uint32_t runtime, driver, cupti_major, cupti_api, other_runtime;
    std::string linkage, runtime_path, cupti_path;
  };
  std::vector<Cuda> cudas;
  void on_cuda(const CudaRecord& w) override {
    cudas.push_back({w.runtime, w.driver, w.cupti_major, w.cupti_api, w.other_runtime,
                     std::string(w.linkage), std::string(w.runtime_path),
                     std::string(w.cupti_path)});
    types += 'w';
  }
  void on_attach(bool ok, std::string_view m) override {
    attaches.emplace_back(ok, std::string(m));
    types += 'i';
  }
  void on_module(const ModuleRecord& m) override {
    modules.push_back({m.base, m.start, m.end, std::string(m.path), std::string(m.build_id)});
    types += 'm';
  }
  void on_stack(const StackRecord& s) override {
    auto [it, inserted] = stacks.try_emplace(s.id, s.addresses.begin(), s.addresses.end());
    if (!inserted) ++stack_redefinitions;
    types += 's';
  }
  void on_event(const ApiEvent& e) override {
    events.push_back(e);
    types += 'e';
  }
  void on_thread_exit(uint32_t tid, uint64_t t) override {
    thread_exits.emplace_back(tid, t);
    types += 'x';
  }
  void on_end(uint64_t t, int status) override {
    ends.emplace_back(t, status);
    types += 'z';
  }
  struct Range {
    bool begin = false;
    uint64_t seq = 0, time_ns = 0, id = 0;
    uint32_t tid = 0;
    std::string domain, name;
  };
  std::vector<Range> ranges;
  void on_range_begin(const RangeRecord& r) override {
    ranges.push_back(
        {true, r.seq, r.time_ns, r.id, r.tid, std::string(r.domain), std::string(r.name)});
    types += 'r';
  }
  void on_range_end(const RangeRecord& r) override {
    ranges.push_back({false, r.seq, r.time_ns, r.id, r.tid, {}, {}});
    types += 'R';
  }
  std::vector<ReadError> skipped;  // damaged lines, reading went on
  void on_skipped_line(const ReadError& error) override {
    skipped.push_back(error);
    types += '!';
  }
};

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "capguard-trace-XXXXXX");
    path_ = mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace capguard::trace::testing
