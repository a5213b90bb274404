#include "cli/trace_ending.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "util/regular_file.h"

namespace capguard::cli {

TraceEnding scan_trace_ending(const std::string& path) {
  TraceEnding ending;
  OpenRegular why;
  const int fd = open_regular(path, why);
  if (fd < 0) return ending;
  // The first bytes of each line are enough to tell its record.
  constexpr size_t kPrefix = 9;  // "i failed "
  std::string prefix;
  const auto judge = [&] {
    const std::string_view p(prefix);
    if (p.starts_with("z ")) ending.has_end = true;
    if (p == "i failed" || p.starts_with("i failed ")) ending.attach_failed = true;
    if (p.starts_with("i ")) ending.has_attach = true;
    prefix.clear();
  };
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      return ending;
    }
    if (n == 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      const char c = buffer[i];
      if (c == '\n') {
        judge();
      } else if (prefix.size() < kPrefix) {
        prefix += c;
      }
    }
  }
  judge();  // a last line without its newline
  close(fd);
  ending.readable = true;
  return ending;
}

}  // namespace capguard::cli
