#include "cli/report_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace capguard::cli {
namespace {

namespace fs = std::filesystem;

constexpr size_t kFlushAt = 64 * 1024;
constexpr int kMaxSymlinkHops = 40;  // as the kernel's ELOOP limit

// The descriptor behind /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N: opening the
// path instead would start at offset 0 of a file already written to, or fail for a pipe.
int inherited_descriptor(std::string_view path) {
  if (path == "/dev/stdin") return 0;
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (!path.starts_with(prefix)) continue;
    std::string_view digits = path.substr(prefix.size());
    int fd = -1;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
    if (ec == std::errc() && end == digits.data() + digits.size() && !digits.empty()) return fd;
  }
  return -1;
}

// Follows symlinks to the path they finally name (which need not exist). Sets errno on failure.
bool resolve_symlinks(std::string& path) {
  for (int hop = 0; hop < kMaxSymlinkHops; ++hop) {
    struct stat st;
    if (lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return true;
    char target[PATH_MAX];
    const ssize_t n = readlink(path.c_str(), target, sizeof target - 1);
    if (n < 0) return false;
    const fs::path next(std::string(target, static_cast<size_t>(n)));
    path = next.is_absolute() ? next.string() : (fs::path(path).parent_path() / next).string();
  }
  errno = ELOOP;
  return false;
}

}  // namespace

ReportFile::ReportFile(std::string path) : path_(std::move(path)) {}

ReportFile::~ReportFile() {
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
  if (!temporary_.empty()) unlink(temporary_.c_str());
}

bool ReportFile::is_terminal() const { return fd_ >= 0 && isatty(fd_); }

bool ReportFile::fail(const char* what, int error_number) {
  if (!error_.empty()) return false;
  const std::string where = path_.empty() ? "to stderr" : path_ == "-" ? "to stdout" : path_;
  error_ = "cannot write report " + where + ": " + what + std::strerror(error_number);
  return false;
}

bool ReportFile::open() {
  int inherited = path_.empty() ? 2 : path_ == "-" ? 1 : inherited_descriptor(path_);
  if (inherited >= 0) {
    if (fcntl(inherited, F_GETFD) < 0) return fail("", errno);
    std::fflush(inherited == 1 ? stdout : inherited == 2 ? stderr : nullptr);
    fd_ = inherited;
    return true;
  }
  destination_ = path_;
  if (!resolve_symlinks(destination_)) return fail("", errno);
  struct stat st;
  const bool exists = stat(destination_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return fail("", EISDIR);
  if (exists && !S_ISREG(st.st_mode)) {
    // A device, FIFO or socket: write into it; replacing it would destroy it.
    if (S_ISBLK(st.st_mode)) return fail("refusing to write to a block device: ", ENOTSUP);
    fd_ = ::open(destination_.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    owns_fd_ = fd_ >= 0;
    if (fd_ < 0) fail("", errno);
    return fd_ >= 0;
  }
  // A regular file or nothing yet: a reader never sees a half-written report.
  temporary_ = destination_ + ".tmp." + std::to_string(getpid());
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    temporary_.clear();
    return fail("", errno);
  }
  owns_fd_ = true;
  if (exists) (void)fchmod(fd_, st.st_mode & 07777);  // keep the replaced file's permissions
  return true;
}

void ReportFile::write(std::string_view bytes) {
  buffer_.append(bytes);
  if (buffer_.size() >= kFlushAt) flush();
}

void ReportFile::flush() {
  for (size_t done = 0; error_.empty() && done < buffer_.size();) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("", n < 0 ? errno : EIO);
    if (n > 0) done += static_cast<size_t>(n);
  }
  buffer_.clear();
}

std::optional<std::string> ReportFile::close() {
  if (fd_ >= 0 && error_.empty()) flush();
  if (owns_fd_ && fd_ >= 0 && ::close(fd_) != 0) fail("", errno);
  owns_fd_ = false;
  fd_ = -1;
  if (!temporary_.empty() && error_.empty() &&
      rename(temporary_.c_str(), destination_.c_str()) != 0)
    fail("", errno);
  if (!temporary_.empty() && !error_.empty()) unlink(temporary_.c_str());
  temporary_.clear();
  if (error_.empty()) return std::nullopt;
  return error_;
}

}  // namespace capguard::cli
