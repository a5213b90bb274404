// Internal to the reader (and to a caller that names its sink's own type, the analyzer): the
// read loop of read_trace(), a template on the sink's type. With a `final` sink, the event of a
// line whose tail was seen before reaches the sink's on_event() by a direct call, which the
// compiler may inline into the loop; every other record still goes through TraceSink's virtual
// calls. read_trace() (reader.h) is this loop on a plain TraceSink.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/line_scan.h"
#include "trace/reader.h"
#include "trace/record_parser.h"

namespace capguard::trace {
namespace read_loop {

// Large enough that a maximal line always fits next to leftover bytes of the previous read.
// The buffer starts small (most inputs of a fuzzer, a short trace) and doubles while reads
// keep filling it.
inline constexpr size_t kBufferSize = 256 * 1024;
inline constexpr size_t kFirstBufferSize = 16 * 1024;
static_assert(kBufferSize > 2 * size_t{kMaxLineLength});
// The parser loads whole words and may read 32 bytes past a line's '\n' (field_cursor.h);
// the line split reads 64-byte blocks, the last of which may start one byte before the end.
inline constexpr size_t kPadding = 64;

std::string line_too_long();
// A first line that is not a 'v' header gets a message that says what the file is not.
inline bool looks_like_header(std::string_view start) {
  return start.size() < 2 || (start[0] == 'v' && start[1] == ' ');
}
inline constexpr char kNotATrace[] = "not a capguard trace (the first line is not a 'v' header)";
inline constexpr char kTruncatedLastLine[] = "truncated: last record is incomplete";
inline constexpr char kEmptyTrace[] = "empty trace";
inline std::string cannot_read(const std::string& why) { return "cannot read trace: " + why; }

// Opens `path` for read_file(): a descriptor, or -1 with `error` set.
int open_trace(const std::string& path, std::string& error);
void close_trace(int fd);
// One read(2) for read_file(): bytes read, 0 at the end, -1 with `error` set.
ptrdiff_t read_some(int fd, char* data, size_t size, std::string& error);
// One pread(2) at `offset`, the same way (for the parse-ahead helpers, parse_ahead.h).
ptrdiff_t read_at(int fd, char* data, size_t size, uint64_t offset, std::string& error);

// Reads with `read_some(buffer, size)` (returns bytes read, 0 at the end, -1 with a message
// in `io_error` on failure) and hands complete lines to the record parser.
template <class Sink, class ReadSome>
std::optional<ReadError> read_lines(const std::string& source, ReadSome read_some, Sink& sink) {
  std::vector<char> storage(kFirstBufferSize + kPadding);  // zeroed: no stray reads
  size_t capacity = kFirstBufferSize;
  char* buf = storage.data();
  size_t begin = 0, end = 0;
  uint64_t line = 0;
  RecordParser parser(sink);
  auto fail = [&](uint64_t at, std::string message) {
    return ReadError{source, at, std::move(message)};
  };
  // A bad line past the header is skipped, named to the sink, and reading goes on: one flipped
  // byte must not cost the rest of a long trace.
  auto skip = [&](uint64_t at, std::string message) {
    sink.on_skipped_line(ReadError{source, at, std::move(message)});
  };
  bool skipping = false;  // inside an over-long line, already counted: drop it up to its end
  for (;;) {
    scan::Newlines newlines(buf, begin, end);
    for (size_t newline; newlines.next(newline);) {
      const size_t length = newline - begin;
      const std::string_view text(buf + begin, length);
      begin = newline + 1;
      if (std::exchange(skipping, false)) continue;
      ++line;
      if (line == 1 && !looks_like_header(text)) return fail(1, kNotATrace);
      if (length > kMaxLineLength) {
        if (line == 1) return fail(line, line_too_long());
        skip(line, line_too_long());
      } else if (!parser.template parse<Sink>(text)) {
        if (line == 1) return fail(line, parser.error());  // a header we cannot read: stop
        skip(line, parser.error());
      }
    }
    std::string_view rest(buf + begin, end - begin);
    if (line == 0 && !looks_like_header(rest)) return fail(1, kNotATrace);
    if (rest.size() > kMaxLineLength) {
      if (line == 0) return fail(1, line_too_long());
      if (!skipping) skip(++line, line_too_long());
      skipping = true;
      begin = end;
      rest = {};
    }

    const bool was_full = end == capacity;
    std::memmove(buf, buf + begin, rest.size());
    end = rest.size();
    begin = 0;
    if (was_full && capacity < kBufferSize) {  // also makes room when one line fills it
      capacity = std::min(2 * capacity, kBufferSize);
      storage.resize(capacity + kPadding);
      buf = storage.data();
    }
    std::string io_error;
    const ptrdiff_t n = read_some(buf + end, capacity - end, io_error);
    if (n < 0) return fail(0, cannot_read(io_error));
    if (n == 0) break;
    end += static_cast<size_t>(n);
  }
  if (skipping) begin = end;  // the over-long last line was reported already
  if (end > begin) return fail(line + 1, kTruncatedLastLine);
  if (line == 0) return fail(0, kEmptyTrace);
  if (!parser.finish()) return fail(line, parser.error());
  return std::nullopt;
}

// Opens `path` and returns `read(read_some, fd)`, where read_some(data, size, error) reads from
// it as read_lines() wants; the file is closed after, also when `read` throws.
template <class Read>
std::optional<ReadError> with_trace_file(const std::string& path, Read read) {
  std::string error;
  const int fd = open_trace(path, error);
  if (fd < 0) return ReadError{path, 0, "cannot open trace: " + error};
  struct Close {
    int fd;
    ~Close() { close_trace(fd); }
  } close{fd};
  return read(
      [fd](char* data, size_t size, std::string& e) { return read_some(fd, data, size, e); }, fd);
}

// read_trace(path, sink) for a sink of type Sink (derived from TraceSink).
template <class Sink>
std::optional<ReadError> read_file(const std::string& path, Sink& sink) {
  return with_trace_file(path, [&](auto read_fd, int) { return read_lines(path, read_fd, sink); });
}

}  // namespace read_loop
}  // namespace capguard::trace
