#include "trace/parse_ahead.h"

#include <sched.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <system_error>
#include <utility>

#include "trace/event_fast_path.h"
#include "trace/line_scan.h"
#include "trace/reset.h"

namespace capguard::trace {

void ParsedLines::grow() {
  const size_t capacity = std::max<size_t>(4096, 2 * capacity_);
  auto data = std::make_unique_for_overwrite<ParsedLine[]>(capacity);
  std::copy(begin(), end(), data.get());
  data_ = std::move(data);
  capacity_ = capacity;
}

// A helper's thread, its chunks in the making and its half of the tail cache.
struct ParseAhead::Helper {
  // Chunks a helper may have done before the caller took them: enough that a helper slowed for a
  // moment (a VM's vCPU) does not stall the caller at once.
  static constexpr size_t kChunksAhead = 3;

  std::array<ParsedChunk, kChunksAhead> chunks;
  std::vector<char> buffer;  // the sliding read window, read_loop::kPadding after its capacity
  EventTailCache tails;      // keys only: the events are the caller's (read_parsed)
  ApiEvent event;            // the new tail's event being parsed

  std::mutex mutex;
  std::condition_variable filled_cv, emptied_cv;
  uint64_t filled = 0;  // chunks this helper has done
  uint64_t taken = 0;   // of them, those the caller handed back
  bool caller_waiting = false, helper_waiting = false, stop = false;
  std::thread thread;
};

ParseAhead::ParseAhead(ReadAt read_at, uint64_t file_bytes, unsigned helpers, size_t chunk_bytes)
    : read_at_(std::move(read_at)), chunk_bytes_(std::max<size_t>(chunk_bytes, 1)) {
  const uint64_t chunks = std::max<uint64_t>(1, (file_bytes + chunk_bytes_ - 1) / chunk_bytes_);
  const uint64_t count = std::clamp<uint64_t>(helpers, 1, std::min<uint64_t>(chunks, kMaxHelpers));
  for (uint64_t i = 0; i < count; ++i) helpers_.push_back(std::make_unique<Helper>());
}

ParseAhead::~ParseAhead() {
  for (auto& helper : helpers_) {
    std::lock_guard lock(helper->mutex);
    helper->stop = true;
    helper->emptied_cv.notify_one();
  }
  for (auto& helper : helpers_)
    if (helper->thread.joinable()) helper->thread.join();
}

bool ParseAhead::start() {
  try {
    for (unsigned i = 0; i < helpers_.size(); ++i)
      helpers_[i]->thread = std::thread([this, i] { run(*helpers_[i], i); });
    return true;
  } catch (const std::system_error&) {
    // Every chunk needs its helper: with fewer, the caller would wait for ever. What the
    // started ones read went nowhere yet.
    for (auto& helper : helpers_) {
      {
        std::lock_guard lock(helper->mutex);
        helper->stop = true;
        helper->emptied_cv.notify_one();
      }
      if (helper->thread.joinable()) helper->thread.join();
    }
    return false;
  }
}

// Each side sleeps only when it must: a wake-up costs microseconds on a VM.
void ParseAhead::run(Helper& helper, unsigned index) {
  const uint64_t stride = helpers_.size();
  for (uint64_t mine = 0;; ++mine) {
    const uint64_t n = index + mine * stride;
    {
      std::unique_lock lock(helper.mutex);
      if (helper.filled - helper.taken == Helper::kChunksAhead) {
        helper.helper_waiting = true;
        helper.emptied_cv.wait(lock, [&] {
          return helper.filled - helper.taken < Helper::kChunksAhead || helper.stop;
        });
        helper.helper_waiting = false;
      }
      if (helper.stop) return;
    }
    ParsedChunk& out = helper.chunks[mine % Helper::kChunksAhead];
    try {
      parse_chunk(helper, n * chunk_bytes_, (n + 1) * chunk_bytes_, out);
    } catch (...) {  // nothing escapes the thread: the caller rethrows it after the lines
      out.failure = std::current_exception();
      out.last = true;
    }
    std::lock_guard lock(helper.mutex);
    ++helper.filled;
    if (helper.caller_waiting) helper.filled_cv.notify_one();
    // The caller stops at the first last chunk: this helper's later ones, past it, are not
    // wanted, and every one before it it made.
    if (out.last) return;
  }
}

const ParsedChunk& ParseAhead::take(uint64_t n) {
  if (held_) give_back(*held_);
  held_.reset();
  Helper& helper = *helpers_[n % helpers_.size()];
  const uint64_t mine = n / helpers_.size();
  std::unique_lock lock(helper.mutex);
  if (helper.filled <= mine) {
    helper.caller_waiting = true;
    helper.filled_cv.wait(lock, [&] { return helper.filled > mine; });
    helper.caller_waiting = false;
  }
  held_ = n;
  return helper.chunks[mine % Helper::kChunksAhead];
}

void ParseAhead::give_back(uint64_t n) {
  Helper& helper = *helpers_[n % helpers_.size()];
  std::lock_guard lock(helper.mutex);
  ++helper.taken;
  if (helper.helper_waiting) helper.emptied_cv.notify_one();
}

namespace {

// One complete line of at most kMaxLineLength bytes, followed in memory by its '\n' and
// read_loop::kPadding more bytes: what RecordParser::parse() would do first with it, without
// the sink.
void add_line(std::string_view line, EventTailCache& tails, ApiEvent& event, ParsedChunk& out) {
  if (is_event_line(line)) {
    ParsedLine parsed;
    std::string_view tail;
    const bool split = parse_event_head(line, parsed.seq, parsed.time_ns, parsed.tid, tail);
    if (split) {
      if (const int slot = tails.find_slot(tail); slot >= 0) {
        parsed.kind = ParsedLine::kSeenEvent;
        parsed.slot = static_cast<uint16_t>(slot);
        out.lines.append() = parsed;
        return;
      }
    }
    reset(event);
    std::string_view api;
    if (parse_event_fast(line, event, api)) {
      parsed.kind = ParsedLine::kNewEvent;
      if (const int slot = split ? tails.pending_slot() : -1; slot >= 0) {
        parsed.slot = static_cast<uint16_t>(slot);
        tails.store_key();
      }
      parsed.seq = out.events.size();
      parsed.time_ns = out.text.size();  // the API name's bytes, made a view by the caller
      parsed.tid = static_cast<uint32_t>(api.size());
      out.text.insert(out.text.end(), api.begin(), api.end());
      event.api = {};
      out.events.push_back(event);
      out.lines.append() = parsed;
      return;
    }  // else the caller's parser says what is wrong with it
  }
  ParsedLine parsed;
  parsed.kind = ParsedLine::kText;
  parsed.seq = out.text.size();
  parsed.time_ns = line.size();
  out.text.insert(out.text.end(), line.begin(), line.end() + 1);  // with its '\n'
  out.lines.append() = parsed;
}

}  // namespace

// The lines that start in [start, end) of the file, read through a window that slides as
// read_lines()'s buffer does. A line that starts before `start` is the chunk before's.
void ParseAhead::parse_chunk(Helper& helper, uint64_t start, uint64_t end, ParsedChunk& out) {
  out.lines.clear(), out.events.clear(), out.text.clear(), out.read_error.clear();
  out.failure = nullptr;
  out.last = false;
  const size_t capacity = read_loop::kBufferSize;
  if (helper.buffer.empty()) helper.buffer.resize(capacity + read_loop::kPadding);
  char* const buf = helper.buffer.data();
  const auto push = [&](ParsedLine::Kind kind) {
    ParsedLine line;
    line.kind = kind;
    out.lines.append() = line;
  };
  // buf[0] is at file offset `base`; [begin, filled) is not cut into lines yet. From the byte
  // before `start` on: a '\n' there makes `start` a line's first byte.
  uint64_t base = start > 0 ? start - 1 : 0;
  size_t begin = 0, filled = 0;
  bool skipping = start > 0;  // inside a line that is not ours, or an over-long one of ours
  bool at_end = false;
  for (;;) {
    scan::Newlines newlines(buf, begin, filled);
    for (size_t newline; (skipping || base + begin < end) && newlines.next(newline);) {
      const size_t length = newline - begin;
      const char* const text = buf + begin;
      begin = newline + 1;
      if (std::exchange(skipping, false)) continue;
      if (length > kMaxLineLength) {
        push(ParsedLine::kTooLong);
      } else {
        add_line(std::string_view(text, length), helper.tails, helper.event, out);
      }
    }
    if (!skipping && base + begin >= end) break;
    if (!skipping && filled - begin > kMaxLineLength) {
      push(ParsedLine::kTooLong);
      skipping = true;
    }
    if (skipping) {
      begin = filled;  // no '\n' in it: the next line starts after these bytes
      if (base + begin >= end) break;
    }
    if (at_end) {
      if (filled > begin) push(ParsedLine::kTruncated);
      out.last = true;
      break;
    }
    const size_t rest = filled - begin;
    std::memmove(buf, buf + begin, rest);
    base += begin;
    filled = rest;
    begin = 0;
    // Up to this chunk's end and a little over, for its last line.
    const uint64_t offset = base + filled;
    const size_t want =
        std::min<uint64_t>(capacity - filled, (offset < end ? end - offset : 0) + 4096);
    const ptrdiff_t n = read_at_(buf + filled, want, offset, out.read_error);
    if (n < 0) {
      push(ParsedLine::kReadError);
      out.last = true;
      break;
    }
    if (n == 0) at_end = true;
    filled += static_cast<size_t>(n);
  }
  out.text.resize(out.text.size() + read_loop::kPadding, '\0');
}

namespace read_loop {

uint64_t file_bytes(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  return static_cast<uint64_t>(st.st_size);
}

// The affinity mask, not the machine's cores: under `taskset -c 0` a second thread only takes
// turns with the first.
unsigned usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(CPU_COUNT(&set));
  return std::thread::hardware_concurrency();
}

}  // namespace read_loop

ReadThreads ReadThreads::sharing_cpus(unsigned jobs) {
  const unsigned cpus = read_loop::usable_cpus();
  const unsigned each = cpus / std::max(jobs, 1u);
  return ReadThreads{each >= 2 ? std::min(each - 1, ParseAhead::kMaxHelpers) : 0};
}

}  // namespace capguard::trace
