// Opening a file a trace names (a module, a companion, a source file, a trace itself): only a
// regular file is ever opened. stat() first, so that a device is never opened at all
// (opening /dev/ptmx allocates a pseudo-terminal, a tape device rewinds); then an open that
// cannot block (a FIFO swapped in meanwhile) and fstat(): still a regular file, and the same
// one (device and inode) that stat() saw.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <optional>
#include <string>

namespace capguard {

enum class OpenRegular { Opened, Missing, NotRegular, Failed };

// The descriptor (close-on-exec; O_NONBLOCK, which a regular file ignores), or -1 with `why` set
// (errno kept for Missing and Failed). `no_follow`: a final symlink is refused rather than
// followed. `st` gets the file's status.
int open_regular(const std::string& path, OpenRegular& why, struct stat& st,
                 bool no_follow = false);
inline int open_regular(const std::string& path, OpenRegular& why) {
  struct stat st;
  return open_regular(path, why, st);
}

// The whole of a regular file, opened as above, of at most `max_bytes` (/dev/zero
// named as a JSON report was read until memory ran out, a FIFO waited on forever). nullopt with
// `error` set: "a FIFO", "not a regular file", "larger than N bytes", or strerror's words.
std::optional<std::string> read_regular_file(const std::string& path, size_t max_bytes,
                                             std::string& error);

}  // namespace capguard
