// Streams a trace (format.h) record by record into a TraceSink. Memory stays bounded by one
// line plus the trace's API names (at most ApiNameStore::kMaxNames), whatever its length. Bad input
// never throws or crashes: a damaged line is skipped (TraceSink::on_skipped_line says where and
// what) and reading goes on; read_trace() returns a ReadError for what ends reading (no header, a
// newer format, a truncated last record, an I/O error), after delivering every record before it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <istream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>

#include "trace/event.h"
#include "trace/graph_record.h"
#include "trace/kernel_record.h"

namespace capguard::trace {

struct ProcessRecord {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint64_t start_unix_ns = 0;
};
// The CUDA a process ran (v7): format.h's 'w' record.
struct CudaRecord {
  uint32_t runtime = 0, driver = 0, cupti_major = 0, cupti_api = 0, other_runtime = 0;
  std::string_view linkage;       // "shared", "static", "unknown"
  std::string_view runtime_path;  // unescaped; valid during the callback only
  std::string_view cupti_path;    // likewise
};
struct ModuleRecord {
  uint64_t base = 0, start = 0, end = 0;
  std::string_view path;      // unescaped; valid during the callback only
  std::string_view build_id;  // hex, may be empty
};
struct CuptiClientRecord {
  uint64_t time_ns = 0;
  uint32_t tid = 0;
  CuptiClientEvent what = CuptiClientEvent::Forwarding;
  std::string_view name;  // unescaped; valid during the callback only
};
// A rehearsed NVTX range opened ('r') or closed ('R'; domain and name empty) (v6).
struct RangeRecord {
  uint64_t seq = 0;
  uint64_t time_ns = 0;
  uint32_t tid = 0;
  uint64_t id = 0;
  std::string_view domain;  // unescaped; valid during the callback only
  std::string_view name;    // likewise
};
// Who ran the process (v7): its host and the launcher variables that were set.
struct LauncherVar {
  std::string_view name;   // a name of trace/launcher_vars.def; valid during the callback only
  std::string_view value;  // unescaped; likewise
};
struct WhoRanRecord {
  std::string_view host;              // unescaped; valid during the callback only
  std::span<const LauncherVar> vars;  // known names only, in trace order; likewise
};
struct StackRecord {
  uint32_t id = 0;
  std::span<const uint64_t> addresses;      // innermost first; valid during the callback only
  std::span<const uint32_t> python_frames;  // PythonFrameRecord ids, innermost first; likewise
};
struct PythonFrameRecord {
  uint32_t id = 0;
  uint32_t line = 0;          // 0 when unknown
  std::string_view file;      // unescaped; valid during the callback only
  std::string_view function;  // likewise
};

// The API names of the events one sink receives, each kept once. ApiEvent::api points here, so a
// name lives as long as its sink (the replay tells names apart by address). Each sink has its
// own: no trace's names can crowd out another's, whatever order `-j` reads the traces in, and
// they are freed with their trace's analysis.
class ApiNameStore {
 public:
  // Past this many distinct names a trace is damaged: CUDA 13's CUPTI names 1,328 functions.
  static constexpr size_t kMaxNames = 4096;

  ApiNameStore() = default;
  ApiNameStore(const ApiNameStore&) = delete;  // views into it would dangle in a copy
  ApiNameStore& operator=(const ApiNameStore&) = delete;
  ApiNameStore(ApiNameStore&&) = default;  // a deque's move keeps its elements where they are
  ApiNameStore& operator=(ApiNameStore&&) = default;

  // The kept copy of `name`, or an empty view when kMaxNames others are kept.
  std::string_view intern(std::string_view name);
  size_t size() const { return index_.size(); }

 private:
  std::deque<std::string> names_;  // never moved: views into them stay valid
  std::unordered_set<std::string_view> index_;
};

// Receives records in file order. Strings and spans are valid only during the call, except
// ApiEvent::api, which lives as long as the sink (api_names()).
class TraceSink {
 public:
  TraceSink() = default;
  TraceSink(TraceSink&&) = default;
  TraceSink& operator=(TraceSink&&) = default;
  virtual ~TraceSink() = default;
  ApiNameStore& api_names() { return api_names_; }
  virtual void on_header(std::string_view /*tool_version*/, int /*format_version*/) {}
  virtual void on_process(const ProcessRecord&) {}
  virtual void on_command(std::string_view /*command_line*/) {}
  virtual void on_attach(bool /*ok*/, std::string_view /*message*/) {}
  virtual void on_cuda(const CudaRecord&) {}
  virtual void on_module(const ModuleRecord&) {}
  virtual void on_python_frame(const PythonFrameRecord&) {}
  virtual void on_stack(const StackRecord&) {}
  virtual void on_event(const ApiEvent&) {}
  virtual void on_thread_exit(uint32_t /*tid*/, uint64_t /*time_ns*/) {}
  virtual void on_end(uint64_t /*time_ns*/, int /*exit_status*/) {}
  // Graph records (v3, graph_record.h).
  virtual void on_graph_node(const GraphNodeRecord&) {}
  virtual void on_graph(const GraphRecord&) {}
  virtual void on_graph_update(const GraphUpdateRecord&) {}
  // The program's own CUPTI client (v5).
  virtual void on_cupti_client(const CuptiClientRecord&) {}
  // Rehearsed NVTX ranges (v6).
  virtual void on_range_begin(const RangeRecord&) {}
  virtual void on_range_end(const RangeRecord&) {}
  virtual void on_rehearse(std::string_view /*glob*/) {}
  // Who ran it (v7).
  virtual void on_who_ran(const WhoRanRecord&) {}
  // Kernel records (v9, kernel_record.h): graph coverage and frozen values.
  virtual void on_kernel_name(const KernelNameRecord&) {}
  virtual void on_launch_count(const LaunchCountRecord&) {}
  virtual void on_kernel_args(const KernelArgsRecord&) {}
  // A damaged line (past the header) that was skipped; reading goes on after it.
  virtual void on_skipped_line(const struct ReadError&) {}

 private:
  ApiNameStore api_names_;
};

struct ReadError {
  std::string source;  // file path or stream name
  uint64_t line = 0;   // 1-based; 0 when the error is not about a line (e.g. cannot open)
  std::string message;
  std::string to_string() const;  // "trace.txt:12: unknown record type 'q'"
};

// How the analyzer reads a trace file (trace/parse_ahead.h): on the caller's thread alone
// (helpers 0), or with helper threads that cut it into lines and parse its events ahead of the
// caller's, which hands them to the sink: the same calls in the same order either way. A file
// under 4 MiB is read on the caller's thread alone, unless `small_files_too`.
struct ReadThreads {
  unsigned helpers = 0;
  bool small_files_too = false;

  // As many helpers (up to 4) as the CPUs this process may use leave beside `jobs` traces read
  // at once, each by its caller's thread.
  static ReadThreads sharing_cpus(unsigned jobs = 1);
};

// API names are kept in the sink's ApiNameStore; an event naming one past its kMaxNames is a
// damaged line.
std::optional<ReadError> read_trace(const std::string& path, TraceSink& sink);
std::optional<ReadError> read_trace(std::istream& in, const std::string& source_name,
                                    TraceSink& sink);

}  // namespace capguard::trace
