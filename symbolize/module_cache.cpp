#include "symbolize/module_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <ctime>
#include <string_view>
#include <tuple>
#include <utility>

namespace capguard {
namespace {

// Version 2: keys are return addresses less the load bias libdwfl used, no longer
// less the trace's recorded base; entries of version 1 (which a forged base could poison) are
// ignored and rewritten.
constexpr std::string_view kMagic = "capguard-symbol-cache\t2";
// What every file the cache wrote begins with, of any version: eviction removes nothing else.
constexpr std::string_view kMarker = "capguard-symbol-cache\t";
constexpr std::string_view kSuffix = ".sym";
constexpr std::string_view kTemporaryPrefix = ".tmp-";
// Far more than libdw's scopes give at one address (the symbolizer cuts them at 64).
constexpr size_t kMaxFramesPerAddress = 1024;
// A temporary file this old was left by a run that died: removed when the directory is swept.
constexpr time_t kStaleTemporarySeconds = 3600;

int64_t nanoseconds(const timespec& t) { return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec; }

// Tabs and newlines separate fields and lines: names that hold them (hostile DWARF) are kept
// exactly, escaped, so that a hit gives the bytes a miss would.
std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\0':
        out += "\\0";
        break;
      default:
        out += c;
    }
  }
  return out;
}

bool unescape(std::string_view text, std::string& out) {
  out.clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out += text[i];
      continue;
    }
    if (++i == text.size()) return false;
    switch (text[i]) {
      case '\\':
        out += '\\';
        break;
      case 't':
        out += '\t';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case '0':
        out += '\0';
        break;
      default:
        return false;
    }
  }
  return true;
}

std::vector<std::string_view> split(std::string_view line, char separator) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t at = line.find(separator, start);
    parts.push_back(line.substr(start, at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

template <typename T>
bool parse(std::string_view text, T& value, int base = 10) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

// FNV-1a: names the file only; the file's own header is what is compared.
std::string path_hash(std::string_view path) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : path) hash = (hash ^ c) * 0x100000001b3ull;
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(16, '0');
  for (int i = 15; i >= 0; --i, hash >>= 4) hex[i] = kDigits[hash & 0xf];
  return hex;
}

// What a module without a build-id is filed under in place of one: not hex, so never a real
// build-id; one file per path, replaced when the file at that path changes.
constexpr std::string_view kNoBuildId = "nobuildid";

// Names as file_name() makes them: a build-id (or kNoBuildId), '-', 16 hex digits of the path's
// hash, ".sym".
bool is_cache_file_name(std::string_view name) {
  if (!name.ends_with(kSuffix)) return false;
  name.remove_suffix(kSuffix.size());
  const size_t dash = name.rfind('-');
  if (dash == std::string_view::npos || name.size() - dash - 1 != 16) return false;
  auto hex = [](std::string_view digits) {
    return std::all_of(digits.begin(), digits.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
  };
  const std::string_view id = name.substr(0, dash);
  if (id == kNoBuildId) return hex(name.substr(dash + 1));
  return id.size() >= 2 && id.size() <= 128 && id.size() % 2 == 0 && hex(id) &&
         hex(name.substr(dash + 1));
}

// Names as write() makes them for its temporary files: ".tmp-<pid>-<random>", in decimal.
bool is_temporary_name(std::string_view name) {
  if (!name.starts_with(kTemporaryPrefix)) return false;
  name.remove_prefix(kTemporaryPrefix.size());
  const size_t dash = name.find('-');
  auto decimal = [](std::string_view digits) {
    return !digits.empty() &&
           std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return dash != std::string_view::npos && decimal(name.substr(0, dash)) &&
         decimal(name.substr(dash + 1));
}

// Whether the file begins as the cache writes its files (a user's own foo.sym does not).
bool has_marker(int dir_fd, const char* name) {
  const int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return false;
  char head[kMarker.size()];
  size_t got = 0;
  while (got < sizeof head) {
    const ssize_t n = read(fd, head + got, sizeof head - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  return got == sizeof head && std::string_view(head, got) == kMarker;
}

std::string file_name(const ModuleIdentity& identity) {
  return (identity.build_id.empty() ? std::string(kNoBuildId) : identity.build_id) + "-" +
         path_hash(identity.path) + std::string(kSuffix);
}

std::string identity_fields(const ModuleIdentity& id) {
  return escape(id.path) + '\t' + id.build_id + '\t' + std::to_string(id.device) + '\t' +
         std::to_string(id.inode) + '\t' + std::to_string(id.size) + '\t' +
         std::to_string(id.mtime_ns) + '\t' + std::to_string(id.ctime_ns);
}

std::string stat_fields(const struct stat& st) {
  return std::to_string(st.st_dev) + ' ' + std::to_string(st.st_ino) + ' ' +
         std::to_string(st.st_size) + ' ' + std::to_string(nanoseconds(st.st_mtim)) + ' ' +
         std::to_string(nanoseconds(st.st_ctim));
}

bool parse_identity(const std::vector<std::string_view>& p, ModuleIdentity& id) {
  return p.size() == 8 && p[0] == "module" && unescape(p[1], id.path) &&
         (id.build_id = p[2], true) && parse(p[3], id.device) && parse(p[4], id.inode) &&
         parse(p[5], id.size) && parse(p[6], id.mtime_ns) && parse(p[7], id.ctime_ns);
}

// The whole file, checked; false (and `entry` unspecified) on anything unexpected.
bool parse_entry(std::string_view text, ModuleEntry& entry) {
  if (text.empty() || text.back() != '\n') return false;  // cut short
  text.remove_suffix(1);
  const auto lines = split(text, '\n');
  if (lines.size() < 4 || lines[0] != kMagic) return false;
  if (!parse_identity(split(lines[1], '\t'), entry.identity)) return false;
  const auto debug = split(lines[2], '\t');
  if (debug.size() != 3 || debug[0] != "debug" || !unescape(debug[1], entry.debug_file) ||
      !unescape(debug[2], entry.debug_state))
    return false;
  entry.debug_known = true;
  size_t at = 3;
  for (; at < lines.size(); ++at) {
    const auto fields = split(lines[at], '\t');
    if (fields[0] != "a") break;
    uint64_t offset = 0;
    size_t count = 0;
    if (fields.size() != 4 || !parse(fields[1], offset, 16) ||
        (fields[2] != "0" && fields[2] != "1") || !parse(fields[3], count) || count == 0 ||
        count > kMaxFramesPerAddress || count > lines.size() - at - 1)
      return false;
    CachedAddress& address = entry.addresses[offset];
    if (!address.frames.empty()) return false;  // listed twice
    address.deep_inline = fields[2] == "1";
    for (size_t i = 0; i < count; ++i) {
      const auto frame = split(lines[++at], '\t');
      CachedFrame& f = address.frames.emplace_back();
      if (frame.size() != 4 || frame[0] != "f" || !parse(frame[1], f.line) || f.line < 0 ||
          !unescape(frame[2], f.function) || !unescape(frame[3], f.file))
        return false;
    }
  }
  size_t listed = 0;
  const auto end = at < lines.size() ? split(lines[at], '\t') : std::vector<std::string_view>{};
  return at + 1 == lines.size() && end.size() == 2 && end[0] == "end" && parse(end[1], listed) &&
         listed == entry.addresses.size();
}

std::string serialize(const ModuleEntry& entry) {
  std::string out(kMagic);
  out += "\nmodule\t" + identity_fields(entry.identity) + '\n';
  out += "debug\t" + escape(entry.debug_file) + '\t' + escape(entry.debug_state) + '\n';
  char number[32];
  for (const auto& [offset, address] : entry.addresses) {
    auto [end, error] = std::to_chars(number, number + sizeof number, offset, 16);
    out += "a\t" + std::string(number, end) + (address.deep_inline ? "\t1\t" : "\t0\t") +
           std::to_string(address.frames.size()) + '\n';
    for (const CachedFrame& f : address.frames)
      out +=
          "f\t" + std::to_string(f.line) + '\t' + escape(f.function) + '\t' + escape(f.file) + '\n';
  }
  out += "end\t" + std::to_string(entry.addresses.size()) + '\n';
  return out;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool is_build_id(std::string_view hex) {
  // Two hex digits a byte; 64 bytes is far past any real build-id and keeps the name short.
  if (hex.size() < 2 || hex.size() > 128 || hex.size() % 2 != 0) return false;
  return std::all_of(hex.begin(), hex.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

// Whether a directory may be made in `parent`: one of the user's own, or a sticky one such as
// /tmp (where what is made stays the maker's). Never in another user's directory: root running
// with a user's HOME must not leave a root-owned cache there.
bool may_create_in(const std::string& parent) {
  struct stat st;
  return lstat(parent.empty() ? "/" : parent.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
         (st.st_uid == geteuid() || (st.st_mode & S_ISVTX) != 0);
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

std::string symbol_cache_dir(const char* setting) {
  if (setting == nullptr) setting = std::getenv("CAPGUARD_SYMBOL_CACHE");
  if (setting != nullptr && *setting != '\0')
    return std::string_view(setting) == "off" ? std::string() : std::string(setting);
  // The XDG base directory specification: a relative value is to be ignored.
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/')
    return std::string(xdg) + "/capguard";
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/')
    return std::string(home) + "/.cache/capguard";
  return {};
}

bool identify_module(int fd, const std::string& path, const std::string& recorded_build_id,
                     ModuleIdentity& identity) {
  struct stat st;
  // None recorded: the file's stat identity alone says it is the file an entry was made from
  // (the build-id only ever named the file and checked what the trace claimed). jaxlib's
  // libjax_common.so has none, and its 700k symbols cost libdwfl about 0.4 s a report.
  if (!(recorded_build_id.empty() || is_build_id(recorded_build_id)) || fstat(fd, &st) != 0)
    return false;
  identity.path = path;
  identity.build_id = recorded_build_id;
  for (char& c : identity.build_id)
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  identity.device = st.st_dev;
  identity.inode = st.st_ino;
  identity.size = st.st_size;
  identity.mtime_ns = nanoseconds(st.st_mtim);
  identity.ctime_ns = nanoseconds(st.st_ctim);
  return true;
}

std::string debug_state(const std::string& debug_file, const std::string& build_id) {
  if (debug_file.empty() && build_id.size() < 2) return "absent";
  // Where elfutils' standard search and debug packages put a separate debug file by build-id.
  const std::string path = !debug_file.empty()
                               ? debug_file
                               : "/usr/lib/debug/.build-id/" + build_id.substr(0, 2) + "/" +
                                     build_id.substr(2) + ".debug";
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? stat_fields(st) : "absent";
}

ModuleCache::ModuleCache(const std::string& dir, uint64_t max_bytes) : max_bytes_(max_bytes) {
  if (dir.empty() || dir.find('\0') != std::string::npos) return;
  // ~/.cache may be missing too; nothing further up is created.
  const std::string parent = parent_of(dir);
  if (may_create_in(parent_of(parent))) mkdir(parent.c_str(), 0700);
  if (may_create_in(parent)) mkdir(dir.c_str(), 0700);
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st;
  // The user's own, and no one else may plant or swap files in it.
  if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    close(fd);
    return;
  }
  dir_fd_ = fd;
}

ModuleCache::~ModuleCache() {
  if (dir_fd_ >= 0) close(dir_fd_);
}

ModuleEntry& ModuleCache::entry(const ModuleIdentity& identity) {
  // By the whole identity: two modules whose names collide (paths of one FNV hash) each keep
  // their own entry, and an entry handed out is never replaced.
  std::unique_ptr<ModuleEntry>& slot = entries_[identity_fields(identity)];
  if (slot != nullptr) return *slot;
  slot = std::make_unique<ModuleEntry>();
  if (enabled() && load(file_name(identity), *slot) && slot->identity == identity &&
      debug_state(slot->debug_file, identity.build_id) == slot->debug_state) {
    ++hits;
    return *slot;
  }
  *slot = ModuleEntry{};
  slot->identity = identity;
  return *slot;
}

bool ModuleCache::load(const std::string& name, ModuleEntry& entry) {
  const int fd =
      openat(dir_fd_, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return false;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
            st.st_size > 0 && st.st_size <= kMaxEntryBytes;
  std::string text;
  if (ok) {
    // At most one byte more than fstat said: a file that grew meanwhile is not trusted.
    text.resize(static_cast<size_t>(st.st_size) + 1);
    size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    ok = got == static_cast<size_t>(st.st_size);
    text.resize(got);
  }
  ok = ok && parse_entry(text, entry);
  if (ok) futimens(fd, nullptr);  // used: the last to be evicted
  close(fd);
  return ok;
}

void ModuleCache::flush() {
  bool wrote = false;
  for (const auto& [key, entry] : entries_) {
    if (!entry->dirty || !entry->debug_known || !enabled()) continue;
    write(file_name(entry->identity), *entry);
    entry->dirty = false;
    wrote = true;
  }
  if (wrote) evict();
}

void ModuleCache::write(const std::string& name, const ModuleEntry& entry) {
  const std::string text = serialize(entry);
  if (static_cast<int64_t>(text.size()) > kMaxEntryBytes) return;
  uint64_t random = 0;
  if (getrandom(&random, sizeof random, GRND_NONBLOCK) != sizeof random)
    random = static_cast<uint64_t>(time(nullptr)) ^ reinterpret_cast<uintptr_t>(&entry);
  const std::string temporary =
      std::string(kTemporaryPrefix) + std::to_string(getpid()) + "-" + std::to_string(random);
  const int fd = openat(dir_fd_, temporary.c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  bool ok = write_all(fd, text);
  ok = close(fd) == 0 && ok;
  if (ok && renameat(dir_fd_, temporary.c_str(), dir_fd_, name.c_str()) == 0) {
    ++writes;
    return;
  }
  unlinkat(dir_fd_, temporary.c_str(), 0);
}

void ModuleCache::evict() {
  const int fd = dup(dir_fd_);
  if (fd < 0) return;
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    close(fd);
    return;
  }
  rewinddir(dir);
  std::vector<std::tuple<int64_t, std::string, uint64_t>> files;  // mtime, name, size
  uint64_t total = 0;
  const time_t now = time(nullptr);
  while (const dirent* e = readdir(dir)) {
    const std::string_view name = e->d_name;
    const bool temporary = is_temporary_name(name);
    if (!temporary && !is_cache_file_name(name)) continue;
    struct stat st;
    if (fstatat(dir_fd_, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != geteuid())
      continue;
    if (temporary) {
      if (now - st.st_mtim.tv_sec > kStaleTemporarySeconds) unlinkat(dir_fd_, e->d_name, 0);
      continue;
    }
    // Only files the cache wrote (its names and its first line): a directory given as
    // --symbol-cache may hold the user's own *.sym files.
    if (!has_marker(dir_fd_, e->d_name)) continue;
    files.emplace_back(nanoseconds(st.st_mtim), std::string(name), st.st_size);
    total += static_cast<uint64_t>(st.st_size);
  }
  closedir(dir);
  std::sort(files.begin(), files.end());
  for (const auto& [mtime, name, size] : files) {
    if (total <= max_bytes_) break;
    if (unlinkat(dir_fd_, name.c_str(), 0) == 0) total -= size;
  }
}

}  // namespace capguard
