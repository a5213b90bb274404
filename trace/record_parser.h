// Internal to the reader: parses one line at a time (without its '\n') strictly against the
// grammar in format.h and passes each record to a TraceSink. Reuses its buffers, so parsing
// an event allocates nothing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trace/reader.h"

namespace capguard::trace {

// Interns API names for the whole process (see read_trace) behind a per-trace cache, and
// caps how many distinct names one trace may bring.
class ApiNames {
 public:
  static constexpr size_t kMaxPerTrace = 4096;
  static constexpr size_t kMaxPerProcess = 1 << 16;

  // Returns the interned copy, or an empty view when a cap is reached (error() says which).
  std::string_view intern(std::string_view name);
  const std::string& error() const { return error_; }

 private:
  std::unordered_map<std::string_view, std::string_view> cache_;
  std::string_view last_;
  std::string error_;
};

class RecordParser {
 public:
  explicit RecordParser(TraceSink& sink) : sink_(sink) { addresses_.reserve(64); }

  // Returns false on a malformed record; error() then says what is wrong with it.
  bool parse(std::string_view line);
  // Checks what can only be checked at the end of the trace.
  bool finish();
  const std::string& error() const { return error_; }

 private:
  class Cursor;

  static const char* record_name(char type);  // null for an unknown type
  bool parse_header(Cursor& in);
  bool parse_process(Cursor& in);
  bool parse_command(Cursor& in);
  bool parse_attach(Cursor& in);
  bool parse_module(Cursor& in);
  bool parse_stack(Cursor& in);
  bool parse_event(Cursor& in);
  bool parse_event_field(std::string_view field);
  bool parse_thread_exit(Cursor& in);
  bool parse_end(Cursor& in);

  bool read_hex(Cursor& in, const char* what, uint64_t max, uint64_t& out);
  template <class T>
  bool read_number(Cursor& in, const char* what, T& out);
  bool read_escaped(Cursor& in, const char* what, std::string& out);
  bool no_more_fields(Cursor& in);
  bool fail(std::string message);

  TraceSink& sink_;
  uint64_t records_ = 0;
  bool seen_command_ = false;
  bool seen_end_ = false;
  const char* record_name_ = "";
  std::string error_;
  std::string text_;  // unescaped string of the current record
  std::vector<uint64_t> addresses_;
  ApiEvent event_;
  ApiNames api_names_;
};

}  // namespace capguard::trace
