#include "util/regular_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace capguard {

int open_regular(const std::string& path, OpenRegular& why, struct stat& st, bool no_follow) {
  if (path.empty() || path.find('\0') != std::string::npos) {
    why = OpenRegular::Missing;
    errno = ENOENT;
    return -1;
  }
  struct stat before;
  if ((no_follow ? lstat(path.c_str(), &before) : stat(path.c_str(), &before)) != 0) {
    why = errno == ENOENT || errno == ENOTDIR ? OpenRegular::Missing : OpenRegular::Failed;
    return -1;
  }
  if (!S_ISREG(before.st_mode)) {
    st = before;
    why = OpenRegular::NotRegular;
    return -1;
  }
  const int fd = open(path.c_str(),
                      O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (no_follow ? O_NOFOLLOW : 0));
  if (fd < 0) {
    why = errno == ENOENT ? OpenRegular::Missing : OpenRegular::Failed;
    return -1;
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != before.st_dev ||
      st.st_ino != before.st_ino) {
    close(fd);
    why = OpenRegular::NotRegular;
    return -1;
  }
  why = OpenRegular::Opened;
  return fd;
}

std::optional<std::string> read_regular_file(const std::string& path, size_t max_bytes,
                                             std::string& error) {
  OpenRegular why;
  struct stat st;
  const int fd = open_regular(path, why, st);
  if (fd < 0) {
    error = why != OpenRegular::NotRegular ? std::strerror(errno)
            : S_ISFIFO(st.st_mode)         ? "a FIFO, not a regular file"
            : S_ISDIR(st.st_mode)          ? "a directory"
                                           : "not a regular file";
    return std::nullopt;
  }
  std::string text;
  // The size stat gave, and one byte more: a file that grew past the bound is seen to.
  if (static_cast<uint64_t>(st.st_size) <= max_bytes) text.reserve(static_cast<size_t>(st.st_size));
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = std::strerror(errno);
      close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > max_bytes) {
      error = "larger than " + std::to_string(max_bytes) + " bytes";
      close(fd);
      return std::nullopt;
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return text;
}

}  // namespace capguard
