// Internal to the reader: read(2) on a thread of its own, ahead of the read loop. The thread
// fills a ring of a few chunks from the file; the read loop, on the caller's thread, takes its
// bytes from them in order through ReadAhead::read(), which stands in for read_some().
//
// Why the read and nothing more: the kernel's copy out of the page cache is the largest single
// cost of reading a trace (about 9 of the reader's 23 ns an event on the development VM) and
// needs nothing from the parser, so it moves to the second thread whole, while the line split,
// the parser and the replay stay where they were, on one thread, in one order: the sink sees
// exactly the calls it saw before. (Handing parsed events over instead was tried: copying each
// 152-byte event into a batch cost the reading thread as much as it saved, docs/performance.md.)
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "trace/read_loop.h"
#include "trace/reader.h"

namespace capguard::trace {

class ReadAhead {
 public:
  // As read_lines()'s read_some: bytes read, 0 at the end, -1 with a message in `error`.
  using ReadSome = std::function<ptrdiff_t(char* data, size_t size, std::string& error)>;

  static constexpr size_t kChunks = 8;
  static constexpr size_t kChunkBytes = 64 * 1024;  // 512 KiB in all, half the L2 of a core

  // `chunks` chunks of `chunk_bytes` each (at least 2 of 1 byte: the tests cut bytes finely).
  explicit ReadAhead(ReadSome read_some, size_t chunks = kChunks, size_t chunk_bytes = kChunkBytes);
  // Stops the thread (at its next read at the latest) and joins it.
  ~ReadAhead();
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // Starts the thread; false when none could be had (then read with read_some directly: nothing
  // was read yet).
  bool start();

  // The file's next bytes, as read_some(data, size, error) would give them: up to `size`; what
  // the thread has read so far when that is less (waiting only for the first byte), and the end
  // or an error with the next call after the bytes before it. An exception the thread met is
  // rethrown here, after every byte read before it.
  ptrdiff_t read(char* data, size_t size, std::string& error);

 private:
  struct Chunk {
    std::unique_ptr<char[]> bytes;
    size_t size = 0;       // bytes read into it; 0 with `last`: the end
    bool last = false;     // the reader's last chunk: the end, an error or an exception
    ptrdiff_t result = 0;  // with `last`: read_some's 0 or -1
    std::string error;     // with result -1
    std::exception_ptr failure;
  };

  void run();  // the thread
  Chunk& chunk(uint64_t n) { return chunks_[n % chunks_.size()]; }

  ReadSome read_some_;
  std::vector<Chunk> chunks_;
  size_t chunk_bytes_;
  std::mutex mutex_;
  std::condition_variable filled_, emptied_;
  // Chunks the thread filled (it fills chunk(filled_count_) next), of them those read() used up
  // (it reads chunk(taken_)), and the bytes of chunk(taken_) read() gave already.
  uint64_t filled_count_ = 0;
  uint64_t taken_ = 0;
  size_t offset_ = 0;
  bool reader_waiting_ = false, caller_waiting_ = false;
  bool stop_ = false;
  std::thread thread_;
};

namespace read_loop {

// Below this, a file is read on one thread: starting one would cost more than it saves (a trace
// of 4 MiB is read in a few milliseconds).
inline constexpr uint64_t kTwoThreadsMinBytes = uint64_t{4} << 20;

// The size of the open file `fd` (0 when it is not a regular file), and the CPUs this process
// may run on.
uint64_t file_bytes(int fd);
unsigned usable_cpus();

// read_lines() with, for ReadThreads::Two, its reads done ahead on a second thread (ReadAhead):
// the same calls to the sink, the same result. One instantiation of the read loop for both: with
// two, GCC inlined less of the replay into either (a call per event, 5% slower on one thread).
// `chunks`, `chunk_bytes`: ReadAhead's (the tests make them small).
template <class Sink, class ReadSome>
std::optional<ReadError> read_lines_on(ReadThreads threads, const std::string& source,
                                       ReadSome read_some, Sink& sink,
                                       size_t chunks = ReadAhead::kChunks,
                                       size_t chunk_bytes = ReadAhead::kChunkBytes) {
  std::optional<ReadAhead> ahead;  // stopped and joined on every way out
  if (threads == ReadThreads::Two && !ahead.emplace(read_some, chunks, chunk_bytes).start())
    ahead.reset();  // no thread to be had: nothing was read yet
  const auto read = [&](char* data, size_t size, std::string& error) {
    return ahead ? ahead->read(data, size, error) : read_some(data, size, error);
  };
  return read_lines(source, read, sink);
}

// read_file(path, sink) on the threads `threads` says.
template <class Sink>
std::optional<ReadError> read_file(const std::string& path, Sink& sink, ReadThreads threads) {
  return with_trace_file(path, [&](auto read_fd, int fd) {
    if (threads == ReadThreads::TwoIfLarge)
      threads = file_bytes(fd) >= kTwoThreadsMinBytes && usable_cpus() >= 2 ? ReadThreads::Two
                                                                            : ReadThreads::One;
    return read_lines_on(threads, path, read_fd, sink);
  });
}

}  // namespace read_loop
}  // namespace capguard::trace
