#include "util/regular_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

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

}  // namespace capguard
