// Internal to the reader: parses one line at a time strictly against the grammar in format.h
// and passes each record to a TraceSink. Reuses its buffers, so parsing an event allocates
// nothing. A line is given without its '\n', but that '\n' and 16 more bytes must follow it
// in memory (see field_cursor.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/api_names.h"
#include "trace/event_fast_path.h"
#include "trace/event_tail_cache.h"
#include "trace/field_cursor.h"
#include "trace/graph_record.h"
#include "trace/kernel_record.h"
#include "trace/reader.h"

namespace capguard::trace {

class RecordParser {
 public:
  // `fast_events` off leaves every line to the careful parser (the fuzz target compares).
  explicit RecordParser(TraceSink& sink, bool fast_events = true)
      : sink_(sink), fast_events_(fast_events), api_names_(sink.api_names()) {
    addresses_.reserve(64);
    python_frames_.reserve(64);
  }

  // Returns false on a malformed record; error() then says what is wrong with it. Inline as far
  // as an event whose tail was seen before: most lines end there. `Sink`: the type of the sink
  // given to the constructor (or a base of it), by which that event reaches on_event(); a
  // `final` one is called directly (read_loop.h). Every other record goes through TraceSink.
  template <class Sink = TraceSink>
  [[gnu::always_inline]] bool parse(std::string_view line) {
    ++records_;
    bool split = false;
    if (fast_events_ && records_ > 2 && is_event_line(line)) {
      uint64_t seq = 0, time_ns = 0;
      uint32_t tid = 0;
      std::string_view tail;
      split = parse_event_head(line, seq, time_ns, tid, tail);
      if (ApiEvent* seen = split ? tails_.find(tail) : nullptr) {
        seen->seq = seq, seen->time_ns = time_ns, seen->tid = tid;
        static_cast<Sink&>(sink_).on_event(*seen);
        return true;
      }
    }
    return parse_other(line, split);
  }
  // An event line that a parse-ahead thread parsed the fast way (parse_ahead.h): what parse()
  // does with that line. take_event: `event`'s api is interned already (its tail was seen);
  // take_new_event interns it first, and leaves it empty when it did not (a refused name, or
  // an event where none may be yet).
  template <class Sink = TraceSink>
  [[gnu::always_inline]] bool take_event(const ApiEvent& event) {
    if (++records_ <= 2) [[unlikely]]
      return misplaced_event();
    static_cast<Sink&>(sink_).on_event(event);
    return true;
  }
  bool take_new_event(ApiEvent& event);

  // Checks what can only be checked at the end of the trace.
  bool finish();
  const std::string& error() const { return error_; }

 private:
  using Cursor = FieldCursor;

  static const char* record_name(char type);  // null for an unknown type
  // The rest of parse(); `split`: parse_event_head() split this event line and the tail cache
  // missed (it keeps what the fast path makes of the line).
  [[gnu::noinline]] bool parse_other(std::string_view line, bool split);
  // What the careful parser says of an event line as the first or second record.
  [[gnu::noinline]] bool misplaced_event();
  bool parse_header(Cursor& in);
  bool parse_process(Cursor& in);
  bool parse_command(Cursor& in);
  bool parse_attach(Cursor& in);
  bool parse_cuda(Cursor& in);
  bool parse_cupti_client(Cursor& in);
  bool parse_range(Cursor& in, bool begin);
  bool parse_rehearse(Cursor& in);
  bool parse_who_ran(Cursor& in);
  bool parse_module(Cursor& in);
  bool parse_python_frame(Cursor& in);
  bool parse_stack(Cursor& in);
  bool parse_event(Cursor& in);
  bool parse_event_field(Cursor& in);
  bool parse_thread_exit(Cursor& in);
  bool parse_end(Cursor& in);

  template <class T>
  bool read_number(Cursor& in, const char* what, T& out);
  bool read_escaped(Cursor& in, const char* what, std::string& out);
  bool unescape(std::string_view field, const char* what, std::string& out);
  bool no_more_fields(Cursor& in);
  bool fail(std::string message);

  TraceSink& sink_;
  bool fast_events_;
  uint64_t records_ = 0;
  bool seen_command_ = false;
  bool seen_end_ = false;
  const char* record_name_ = "";
  std::string error_;
  std::string text_;               // unescaped string of the current record
  std::string cuda_runtime_path_;  // the 'w' record's first string, while text_ holds its second
  std::string text2_;
  std::vector<uint64_t> addresses_;
  std::vector<uint32_t> python_frames_;
  std::vector<std::string> launcher_values_;  // of the 'w' record
  std::vector<LauncherVar> launcher_vars_;
  ApiEvent event_;
  ApiNames api_names_;
  EventTailCache tails_;  // events parsed by the fast path, by their bytes after the tid
  GraphRecordParser graphs_;
  KernelRecordParser kernels_;
};

}  // namespace capguard::trace
