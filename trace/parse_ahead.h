// Internal to the reader: a large trace file cut into lines and its events parsed on helper
// threads, ahead of the caller's thread, which hands the records to the sink in file order.
//
// The file is split into chunks of a fixed size; helper h takes chunks h, h + helpers, ... up
// to the first that meets the end of the file (which may have grown meanwhile, as read_lines()
// would read on; every chunk stays bounded). A line belongs to the chunk it starts in, so each
// helper finds its lines alone (pread(2), no hand-over of a partial line). For each line it makes a
// ParsedLine: an event whose tail (everything after the tid) it saw before is three numbers and the
// slot of its own tail cache (event_tail_cache.h) where it keeps that tail's key; a new tail's
// event comes parsed whole, with the slot it now fills; every other line comes as its text, for the
// caller's RecordParser. The caller keeps, per helper, the event of each slot: it is that helper's
// cache split in two, keys on the helper's side and events on the caller's, kept in step because
// the caller takes a helper's lines in the order the helper made them.
//
// Why: cutting lines, reading the head and hashing the tail are two thirds of the reader's
// time an event, and need nothing of the analysis; the caller is left the analysis and a slot
// lookup. The sink sees exactly the calls read_lines() makes on one thread, errors and
// skipped lines included (tests/trace_parse_ahead_test.cpp compares them).
#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "trace/event.h"
#include "trace/event_tail_cache.h"
#include "trace/read_loop.h"
#include "trace/reader.h"
#include "trace/record_parser.h"

namespace capguard::trace {

// One line of a chunk, as a helper left it.
struct ParsedLine {
  enum Kind : uint16_t {
    kSeenEvent,  // seq, time_ns, tid; `slot`: the helper's slot of its tail
    kNewEvent,   // seq: index in ParsedChunk::events, time_ns and tid: offset and length of
                 // its API name in ParsedChunk::text; `slot`: the slot it fills, or kNoSlot
    kText,       // seq: offset in ParsedChunk::text, time_ns: length (no '\n')
    kTooLong,    // a line over kMaxLineLength bytes, cut or not
    kTruncated,  // the file's last bytes, a line without its '\n'
    kReadError,  // ParsedChunk::read_error says what; nothing after it
  };
  static constexpr uint16_t kNoSlot = 0xffff;

  uint64_t seq = 0;
  uint64_t time_ns = 0;
  uint32_t tid = 0;
  Kind kind = kText;
  uint16_t slot = kNoSlot;
};
static_assert(sizeof(ParsedLine) == 24);

// A growable array that appends inline: std::vector::push_back stayed a call, 11% of a helper's
// time.
class ParsedLines {
 public:
  [[gnu::always_inline]] ParsedLine& append() {
    if (size_ == capacity_) [[unlikely]]
      grow();
    return data_[size_++];
  }
  void clear() { size_ = 0; }
  const ParsedLine* begin() const { return data_.get(); }
  const ParsedLine* end() const { return data_.get() + size_; }

 private:
  [[gnu::noinline]] void grow();
  std::unique_ptr<ParsedLine[]> data_;
  size_t size_ = 0, capacity_ = 0;
};

struct ParsedChunk {
  ParsedLines lines;
  std::vector<ApiEvent> events;  // of kNewEvent lines, api left empty
  std::vector<char> text;        // lines of kText, each with its '\n'; read_loop::kPadding after
  std::string read_error;
  std::exception_ptr failure;  // what the helper threw, after `lines`
  bool last = false;           // it met the end of the file, a read error or `failure`
};

class ParseAhead {
 public:
  // pread(2) as a function: bytes read at `offset` (fewer than `size` is not the end), 0 at the
  // end, -1 with a message in `error`.
  using ReadAt =
      std::function<ptrdiff_t(char* data, size_t size, uint64_t offset, std::string& error)>;

  static constexpr size_t kChunkBytes = 256 * 1024;
  static constexpr unsigned kMaxHelpers = 4;

  // Chunks of `chunk_bytes`; no more helpers than the `file_bytes` the file has now has chunks.
  ParseAhead(ReadAt read_at, uint64_t file_bytes, unsigned helpers,
             size_t chunk_bytes = kChunkBytes);
  ~ParseAhead();  // stops the helpers and joins them
  ParseAhead(const ParseAhead&) = delete;
  ParseAhead& operator=(const ParseAhead&) = delete;

  // False when not every helper's thread could be had (those started are stopped again):
  // then read alone; nothing reached the sink.
  bool start();
  unsigned helpers() const { return static_cast<unsigned>(helpers_.size()); }
  // Chunk n, once its helper is done with it (n in order, from 0, up to the first `last` one).
  // take(n + 1) hands the chunk of take(n) back.
  const ParsedChunk& take(uint64_t n);

 private:
  struct Helper;
  void run(Helper& helper, unsigned index);
  void parse_chunk(Helper& helper, uint64_t start, uint64_t end, ParsedChunk& out);
  void give_back(uint64_t n);

  ReadAt read_at_;
  size_t chunk_bytes_;
  std::vector<std::unique_ptr<Helper>> helpers_;
  std::optional<uint64_t> held_;  // the chunk take() gave last
};

namespace read_loop {

// Below this a file is read on the caller's thread alone: threads would cost more than they save.
inline constexpr uint64_t kParseAheadMinBytes = uint64_t{4} << 20;

// The size of the open file `fd` (0 when it is not a regular file), and the CPUs this process
// may run on.
uint64_t file_bytes(int fd);
unsigned usable_cpus();

// The records of `parse_ahead`'s file, in order, to `sink`: read_lines()'s calls and result.
template <class Sink>
std::optional<ReadError> read_parsed(const std::string& source, ParseAhead& parse_ahead,
                                     Sink& sink) {
  RecordParser parser(sink);
  // Per helper, the event of each slot of its tail cache, and the name of one whose API name
  // was not interned (its api is empty then; the name is tried again at each use, as parse()
  // would meet it again).
  struct Slots {
    std::array<ApiEvent, EventTailCache::kSlots> events{};
    std::vector<std::string> uninterned;
  };
  std::vector<Slots> slots(parse_ahead.helpers());
  uint64_t line = 0;
  const auto fail = [&](uint64_t at, std::string message) {
    return ReadError{source, at, std::move(message)};
  };
  const auto skipped = [&](std::string message) {
    sink.on_skipped_line(ReadError{source, line, std::move(message)});
  };
  for (uint64_t n = 0;; ++n) {
    const ParsedChunk& chunk = parse_ahead.take(n);
    Slots& mine = slots[n % slots.size()];
    for (const ParsedLine& parsed : chunk.lines) {
      bool ok = true;
      ++line;
      switch (parsed.kind) {
        case ParsedLine::kSeenEvent: {
          ApiEvent& event = mine.events[parsed.slot];
          event.seq = parsed.seq, event.time_ns = parsed.time_ns, event.tid = parsed.tid;
          if (!event.api.empty()) [[likely]] {
            ok = parser.template take_event<Sink>(event);
          } else {
            ApiEvent named = event;
            named.api = mine.uninterned[parsed.slot];
            ok = parser.take_new_event(named);
          }
          break;
        }
        case ParsedLine::kNewEvent: {
          ApiEvent event = chunk.events[parsed.seq];
          const std::string_view name(chunk.text.data() + parsed.time_ns, parsed.tid);
          event.api = name;
          ok = parser.take_new_event(event);
          if (parsed.slot != ParsedLine::kNoSlot) {
            mine.events[parsed.slot] = event;
            if (event.api.empty()) {
              mine.uninterned.resize(EventTailCache::kSlots);
              mine.uninterned[parsed.slot] = name;
            }
          }
          break;
        }
        case ParsedLine::kText:
          ok = parser.template parse<Sink>(
              std::string_view(chunk.text.data() + parsed.seq, parsed.time_ns));
          break;
        case ParsedLine::kTooLong:
          if (line == 1) return fail(line, line_too_long());
          skipped(line_too_long());
          continue;
        case ParsedLine::kTruncated:
          return fail(line, kTruncatedLastLine);
        case ParsedLine::kReadError:
          return fail(0, cannot_read(chunk.read_error));
      }
      if (!ok) {
        if (line == 1) return fail(line, parser.error());  // a header we cannot read: stop
        skipped(parser.error());
      }
    }
    if (chunk.failure) std::rethrow_exception(chunk.failure);
    if (chunk.last) break;
  }
  if (line == 0) return fail(0, kEmptyTrace);
  if (!parser.finish()) return fail(line, parser.error());
  return std::nullopt;
}

// read_lines() over the file `read_at` reads, with `helpers` threads parsing ahead when there
// are any (and the file starts as a trace does; otherwise read_lines() says what it is).
template <class Sink>
std::optional<ReadError> read_lines_ahead(const std::string& source, ParseAhead::ReadAt read_at,
                                          uint64_t file_bytes, unsigned helpers, Sink& sink,
                                          size_t chunk_bytes = ParseAhead::kChunkBytes) {
  if (helpers > 0) {
    char start[2] = {};
    std::string error;
    if (read_at(start, 2, 0, error) == 2 && looks_like_header(std::string_view(start, 2))) {
      ParseAhead ahead(read_at, file_bytes, helpers, chunk_bytes);  // joined on every way out
      if (ahead.start()) return read_parsed(source, ahead, sink);
    }
  }
  uint64_t offset = 0;
  const auto read_some = [&](char* data, size_t size, std::string& error) {
    const ptrdiff_t n = read_at(data, size, offset, error);
    if (n > 0) offset += static_cast<uint64_t>(n);
    return n;
  };
  return read_lines(source, read_some, sink);
}

// read_file(path, sink) on the threads `threads` says.
template <class Sink>
std::optional<ReadError> read_file(const std::string& path, Sink& sink, ReadThreads threads) {
  return with_trace_file(path, [&](auto read_fd, int fd) -> std::optional<ReadError> {
    const uint64_t size = file_bytes(fd);
    unsigned helpers = std::min(threads.helpers, ParseAhead::kMaxHelpers);
    if (size == 0 || (size < kParseAheadMinBytes && !threads.small_files_too)) helpers = 0;
    if (helpers == 0) return read_lines(path, read_fd, sink);
    return read_lines_ahead(
        path,
        [fd](char* data, size_t n, uint64_t offset, std::string& error) {
          return read_at(fd, data, n, offset, error);
        },
        size, helpers, sink);
  });
}

}  // namespace read_loop
}  // namespace capguard::trace
