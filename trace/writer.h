// Appends records to a trace (format.h). Used inside the program under test, so it never
// throws, never allocates after open(), and each record is a single write(2) on an O_APPEND
// descriptor: safe from many threads at once and from signal handlers, and nothing is
// buffered in the process that a crash could lose.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trace/event.h"

namespace capguard::trace {

class TraceWriter {
 public:
  TraceWriter() = default;
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  ~TraceWriter();

  // Creates <dir>/capguard.<pid>.<host>.trace (capguard.<pid>.<host>.1.trace, .2 ... if it
  // exists, so that every trace still ends in ".trace"; without a host capguard.<pid>.trace) and
  // writes the header and the process record in one write(2). The host (nodes sharing
  // a trace directory can share a pid) goes into the name as file_name_host() writes it. Closes
  // a previously open trace first. Returns false (and stays closed) on failure. Neither open()
  // nor abandon() may race with writes from other threads (a fork child has one thread). Every
  // call leaves errno as it found it.
  bool open(const char* dir, uint32_t pid, uint32_t ppid, uint64_t start_unix_ns,
            const char* host = nullptr);
  // Closes the descriptor without writing anything: for a fork child that must not share it.
  void abandon();
  bool is_open() const { return fd_ >= 0; }
  const char* path() const { return path_; }

  void write_command(const char* command_line);  // escaped on the way out
  void write_attach(bool ok, const char* message);
  // The 'w' record (format.h): linkage is "shared", "static" or "unknown"; paths may be empty.
  void write_cuda(uint32_t runtime, uint32_t driver, uint32_t cupti_major, uint32_t cupti_api,
                  const char* linkage, uint32_t other_runtime, const char* runtime_path,
                  const char* cupti_path);
  // Who ran it (v8): the 'h' record: the host and the launcher variables that were set,
  // `count` pairs (names from trace/launcher_vars.def; a null value is left out), cut to fit one
  // record.
  void write_who_ran(const char* host, const char* const* names, const char* const* values,
                     size_t count);
  void write_cupti_client(uint64_t time_ns, uint32_t tid, CuptiClientEvent what, const char* name);
  void write_module(uint64_t base, uint64_t start, uint64_t end, const char* path,
                    const char* build_id_hex);  // build_id_hex may be null or empty
  // Writes the stack (when stack_addresses is not null) and the event in one write(2), so a
  // stack definition always precedes its first use even with many threads writing. Frames
  // beyond kMaxStackDepth are dropped (the innermost are kept). A stack of depth 0, or with
  // event.stack == 0, is no stack: the event is written with stack 0.
  void write_event(const ApiEvent& event, const uint64_t* stack_addresses = nullptr,
                   size_t stack_depth = 0);
  // The same with the calling thread's Python frames (ids of 'y' records already written,
  // innermost first, at most kMaxPythonDepth kept) after the native addresses.
  void write_event(const ApiEvent& event, const uint64_t* stack_addresses, size_t stack_depth,
                   const uint32_t* python_frames, size_t python_depth);
  // An 's' record alone (a stack the kernel records name, kernel_record.h); nothing for id 0 or
  // an empty stack.
  void write_stack(uint32_t id, const uint64_t* stack_addresses, size_t stack_depth,
                   const uint32_t* python_frames, size_t python_depth);
  // A 'y' record. The strings need not be NUL-terminated; each is cut to fit the record.
  void write_python_frame(uint32_t id, uint32_t line, std::string_view file,
                          std::string_view function);
  // Rehearsed NVTX ranges (v6): domain and name need not be NUL-terminated; the name is cut
  // at kMaxRangeNameLength bytes.
  void write_range_begin(uint64_t seq, uint64_t time_ns, uint32_t tid, uint64_t id,
                         std::string_view domain, std::string_view name);
  void write_range_end(uint64_t seq, uint64_t time_ns, uint32_t tid, uint64_t id);
  void write_rehearse(std::string_view glob);  // cut at kMaxRangeNameLength bytes
  void write_thread_exit(uint32_t tid, uint64_t time_ns);
  void write_end(uint64_t time_ns, int exit_status);
  // A record already formatted, '\n' included (graph_record.h), in one write(2).
  void write_record(const char* data, size_t size) { write_all(data, size); }

  // The host a trace names: CAPGUARD_HOST where set (tests simulate nodes with it), else
  // gethostname; NUL-terminated, cut to capacity. No allocation (the interposer calls it).
  static void read_host(char* out, size_t capacity);
  // The host as trace file names carry it (python/capguard_cuda/pytest_plugin.py writes the same):
  // bytes outside [A-Za-z0-9._-] become '_' (a leading '.' too: never "." or ".." or a hidden
  // name), at most kMaxFileNameHost bytes. Dots stay, so that `$(hostname)` names a node's
  // directory; nothing reads the host back from a name (readers identify a process
  // by its records: cli/merge_reports.h). Writes a NUL-terminated string; returns its length.
  static size_t file_name_host(const char* host, char* out, size_t capacity);
  static constexpr size_t kMaxFileNameHost = 64;

  static constexpr size_t kMaxStackDepth = 64;
  static constexpr size_t kMaxPythonDepth = 64;

 private:
  void write_all(const char* data, size_t size);
  std::atomic<int> fd_{-1};
  char path_[4096] = {};
};

}  // namespace capguard::trace
