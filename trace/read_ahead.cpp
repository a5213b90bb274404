#include "trace/read_ahead.h"

#include <algorithm>
#include <cstring>
#include <system_error>
#include <utility>

namespace capguard::trace {

ReadAhead::ReadAhead(ReadSome read_some, size_t chunks, size_t chunk_bytes)
    : read_some_(std::move(read_some)),
      chunks_(std::max<size_t>(chunks, 2)),
      chunk_bytes_(std::max<size_t>(chunk_bytes, 1)) {
  for (Chunk& c : chunks_) c.bytes = std::make_unique_for_overwrite<char[]>(chunk_bytes_);
}

ReadAhead::~ReadAhead() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    emptied_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

bool ReadAhead::start() {
  try {
    thread_ = std::thread([this] { run(); });
    return true;
  } catch (const std::system_error&) {
    return false;
  }
}

// Each side sleeps only when it must and is woken only when it can go on for a while: a wake-up
// costs microseconds on a VM (an interrupt to the other CPU). The thread, which reads far faster
// than the caller parses, mostly waits for a free chunk and is woken when half the ring is.
void ReadAhead::run() {
  for (;;) {
    Chunk* c;
    {
      std::unique_lock lock(mutex_);
      if (filled_count_ - taken_ == chunks_.size()) {
        reader_waiting_ = true;
        emptied_.wait(lock, [&] { return filled_count_ - taken_ <= chunks_.size() / 2 || stop_; });
        reader_waiting_ = false;
      }
      if (stop_) return;
      c = &chunk(filled_count_);  // the caller has used it up, and looks at none at or past it
    }
    c->size = 0, c->last = false, c->result = 0, c->failure = nullptr;
    c->error.clear();
    try {
      const ptrdiff_t n = read_some_(c->bytes.get(), chunk_bytes_, c->error);
      if (n > 0) c->size = static_cast<size_t>(n);
      c->last = n <= 0, c->result = n < 0 ? -1 : 0;
    } catch (...) {  // nothing escapes the thread: read() rethrows it in its turn
      c->failure = std::current_exception();
      c->last = true;
    }
    std::lock_guard lock(mutex_);
    ++filled_count_;
    if (caller_waiting_) filled_.notify_one();
    if (c->last) return;
  }
}

ptrdiff_t ReadAhead::read(char* data, size_t size, std::string& error) {
  size_t copied = 0;
  while (copied < size) {
    Chunk* c;
    {
      std::unique_lock lock(mutex_);
      if (taken_ == filled_count_) {
        if (copied > 0) break;  // what is there now: waiting for more would keep both waiting
        caller_waiting_ = true;
        filled_.wait(lock, [&] { return taken_ < filled_count_; });
        caller_waiting_ = false;
      }
      c = &chunk(taken_);
    }
    if (c->last) {
      if (copied > 0) break;  // the end or the error comes with the next call, as with read(2)
      if (c->failure) std::rethrow_exception(c->failure);
      if (c->result < 0) error = c->error;
      return c->result;
    }
    const size_t n = std::min(size - copied, c->size - offset_);
    std::memcpy(data + copied, c->bytes.get() + offset_, n);
    copied += n, offset_ += n;
    if (offset_ == c->size) {
      offset_ = 0;
      std::lock_guard lock(mutex_);
      ++taken_;
      if (reader_waiting_ && filled_count_ - taken_ <= chunks_.size() / 2) emptied_.notify_one();
    }
  }
  return static_cast<ptrdiff_t>(copied);
}

}  // namespace capguard::trace
