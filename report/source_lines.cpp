#include "report/source_lines.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "util/regular_file.h"

namespace capguard {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxLineLength = 400;     // a minified or generated line is cut, not shown whole
constexpr uint64_t kStride = 1024;         // lines between two remembered offsets
constexpr uint64_t kFarBytes = 64 * 1024;  // a line start this far past the last one remembered
constexpr size_t kMaxNameLength = 4096;    // PATH_MAX: longer names are no file
constexpr size_t kMaxTailComponents = 32;  // path tails tried under the root: the last 32

constexpr std::string_view kSourceExtensions[] = {
    "c",   "cc",  "cp",  "cpp", "cxx", "c++", "cu",   "cuh", "h",   "hh",  "hpp", "hxx", "h++",
    "inl", "inc", "ipp", "tpp", "tcc", "ixx", "cppm", "py",  "pyx", "pxd", "pxi", "pyi"};

std::string real_path(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return {};
  std::string out(resolved);
  std::free(resolved);
  return out;
}

// Opens `path` for reading without following a final symlink and without blocking (a FIFO),
// and checks that it is a regular file of at most kMaxSourceFileBytes. -1 otherwise.
int open_source(const std::string& path, struct stat& st) {
  OpenRegular why;
  const int fd = open_regular(path, why, st, /*no_follow=*/true);
  if (fd < 0) return -1;
  if (static_cast<uint64_t>(st.st_size) > kMaxSourceFileBytes) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

bool has_source_extension(const std::string& path) {
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return false;
  if (dot == 0 || (slash != std::string::npos && dot == slash + 1)) return false;  // ".cu"
  std::string extension = path.substr(dot + 1);
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::find(std::begin(kSourceExtensions), std::end(kSourceExtensions), extension) !=
         std::end(kSourceExtensions);
}

SourceReader::SourceReader(std::string root) : root_(real_path(root.empty() ? "." : root)) {}

// `candidate` resolved, when it is a file the trust boundary lets a report show.
std::optional<std::string> SourceReader::allowed(const std::string& candidate) const {
  if (root_.empty()) return std::nullopt;
  const std::string real = real_path(candidate);
  if (real.empty()) return std::nullopt;
  std::string_view relative;
  if (root_ == "/") {
    relative = std::string_view(real).substr(1);
  } else {
    if (real.size() <= root_.size() + 1 || !real.starts_with(root_) || real[root_.size()] != '/')
      return std::nullopt;
    relative = std::string_view(real).substr(root_.size() + 1);
  }
  // No hidden file or directory below the root: .git/, .env, .ssh/ ...
  for (size_t start = 0; start <= relative.size();) {
    if (start < relative.size() && relative[start] == '.') return std::nullopt;
    const size_t slash = relative.find('/', start);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (!has_source_extension(real)) return std::nullopt;
  return real;
}

std::optional<std::string> SourceReader::resolve(const std::string& file) {
  if (file.empty() || file.size() > kMaxNameLength || file.find('\0') != std::string::npos ||
      !has_source_extension(file) || root_.empty())
    return std::nullopt;
  const fs::path path(file);
  if (path.is_absolute())
    if (auto real = allowed(file)) return real;
  // The path's tails under the root: the same checkout at another place. A tail of one
  // component is tried only for a relative path (a bare "a.cu" names root/a.cu).
  std::vector<fs::path> parts;
  for (const fs::path& part : path.relative_path()) parts.push_back(part);
  const size_t first = parts.size() > kMaxTailComponents ? parts.size() - kMaxTailComponents : 0;
  for (size_t i = first; i < parts.size(); ++i) {
    if (path.is_absolute() && i + 1 == parts.size()) break;
    fs::path tail;
    for (size_t k = i; k < parts.size(); ++k) tail /= parts[k];
    if (auto real = allowed((fs::path(root_) / tail).string())) return real;
  }
  return std::nullopt;
}

SourceReader::Known* SourceReader::known(const std::string& file) {
  auto [it, inserted] = files_.try_emplace(file);
  if (inserted) {
    if (std::optional<std::string> real = resolve(file)) {
      struct stat st;
      const int fd = open_source(*real, st);
      if (fd >= 0) {
        close(fd);
        it->second = Known{*real, st.st_dev, st.st_ino, {0}, 0, {}};
      }
    }
  }
  return it->second ? &*it->second : nullptr;
}

std::vector<SourceLine> SourceReader::around(const std::string& file, int line, int context) {
  std::vector<SourceLine> out;
  if (file.empty() || line <= 0 || context < 0) return out;
  Known* k = known(file);
  if (k == nullptr) return out;
  const uint64_t first = static_cast<uint64_t>(std::max(1, line - context));
  const uint64_t last = static_cast<uint64_t>(line) + static_cast<uint64_t>(context);
  // Past the end of a file read to its end before: no rescan (a trace may ask for any line).
  if (k->lines != 0 && static_cast<uint64_t>(line) > k->lines) return out;
  struct stat st;
  const int fd = open_source(k->path, st);
  if (fd < 0) return out;
  if (st.st_dev != k->device || st.st_ino != k->inode) {  // replaced since it was resolved
    close(fd);
    return out;
  }
  // Start at the last remembered line start at or before `first`; read only up to `last`.
  const size_t checkpoint = std::min<size_t>((first - 1) / kStride, k->checkpoints.size() - 1);
  uint64_t offset = k->checkpoints[checkpoint];
  uint64_t number = checkpoint * kStride + 1;  // the line that starts at `offset`
  if (auto far = k->far_starts.upper_bound(first); far != k->far_starts.begin()) {
    --far;
    if (far->first > number) number = far->first, offset = far->second;
  }
  uint64_t remembered = offset;  // the last line start remembered, in bytes
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  std::array<char, 64 * 1024> buffer;
  std::string text;
  bool at_line_start = true;
  bool reached_end = false;
  while (number <= last) {
    if (offset >= size) {
      reached_end = true;
      break;
    }
    const ssize_t n = pread(fd, buffer.data(), buffer.size(), static_cast<off_t>(offset));
    if (n <= 0) {
      reached_end = n == 0;
      break;
    }
    for (ssize_t i = 0; i < n && number <= last; ++i) {
      if (at_line_start) {
        at_line_start = false;
        const uint64_t here = offset + static_cast<uint64_t>(i);
        if ((number - 1) % kStride == 0 && (number - 1) / kStride == k->checkpoints.size()) {
          k->checkpoints.push_back(here);
          remembered = here;
        } else if (here - remembered >= kFarBytes) {
          k->far_starts.emplace(number, here);  // at most one per kFarBytes of the file
          remembered = here;
        }
      }
      const char c = buffer[static_cast<size_t>(i)];
      if (c == '\n') {
        if (number >= first) {
          if (!text.empty() && text.back() == '\r') text.pop_back();
          out.push_back({static_cast<int>(number), std::move(text)});
        }
        text.clear();
        ++number;
        at_line_start = true;
      } else if (number >= first && text.size() < kMaxLineLength + 1) {
        text += c;  // one byte more than shown: a '\r' before the newline is still seen
      }
    }
    offset += static_cast<uint64_t>(n);
  }
  close(fd);
  if (reached_end) k->lines = at_line_start ? number - 1 : number;
  if (reached_end && !at_line_start && number >= first && number <= last) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    out.push_back({static_cast<int>(number), std::move(text)});  // a last line without newline
  }
  for (SourceLine& l : out)
    if (l.text.size() > kMaxLineLength) l.text.resize(kMaxLineLength);
  // No such line: nothing at all, not just its neighbours.
  const bool has_line =
      std::any_of(out.begin(), out.end(), [&](const SourceLine& l) { return l.number == line; });
  if (!has_line) out.clear();
  return out;
}

}  // namespace capguard
