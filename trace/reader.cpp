// Streaming trace reader: a large read buffer cut into lines in place, handed to the strict
// record parser (trace/record_parser.cpp). Nothing here allocates per line. The loop itself is
// trace/read_loop.h.
#include "trace/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "trace/read_loop.h"

namespace capguard::trace {
namespace read_loop {

std::string line_too_long() {
  return "line is longer than " + std::to_string(kMaxLineLength) + " bytes";
}

// Without blocking, and a regular file only (a trace swapped for a FIFO between the
// directory scan and this open hung the report). trace/ uses the standard library alone, so
// this is util/regular_file's check in small: open non-blocking, then fstat.
int open_trace(const std::string& path, std::string& error) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    error = std::strerror(errno);
    return fd;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    error = "not a regular file";
    return -1;
  }
  return fd;
}

void close_trace(int fd) { ::close(fd); }

ptrdiff_t read_some(int fd, char* data, size_t size, std::string& error) {
  for (;;) {
    const ssize_t n = ::read(fd, data, size);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    error = std::strerror(errno);
    return -1;
  }
}

ptrdiff_t read_at(int fd, char* data, size_t size, uint64_t offset, std::string& error) {
  for (;;) {
    const ssize_t n = ::pread(fd, data, size, static_cast<off_t>(offset));
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    error = std::strerror(errno);
    return -1;
  }
}

}  // namespace read_loop

std::string ReadError::to_string() const {
  if (line == 0) return source + ": " + message;
  return source + ":" + std::to_string(line) + ": " + message;
}

std::optional<ReadError> read_trace(const std::string& path, TraceSink& sink) {
  return read_loop::read_file(path, sink);
}

std::optional<ReadError> read_trace(std::istream& in, const std::string& source_name,
                                    TraceSink& sink) {
  auto read_some = [&in](char* data, size_t size, std::string& error) -> ptrdiff_t {
    if (in.bad()) {
      error = "stream error";
      return -1;
    }
    if (in.eof()) return 0;
    in.read(data, static_cast<std::streamsize>(size));
    if (in.bad()) {
      error = "stream error";
      return -1;
    }
    return static_cast<ptrdiff_t>(in.gcount());
  };
  return read_loop::read_lines(source_name, read_some, sink);
}

}  // namespace capguard::trace
