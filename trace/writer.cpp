// The trace writer runs inside CUPTI callbacks on the program's threads and possibly in signal
// handlers, so everything here is async-signal-safe: records are formatted by hand into a
// buffer on the stack (no printf, no allocation, no locks, no exceptions) and leave with one
// write(2) each.
#include "trace/writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "trace/errno_guard.h"

namespace capguard::trace {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

bool is_printable(unsigned char c) { return c >= 0x21 && c <= 0x7e; }

// Appends to a fixed buffer and never writes past it. Numeric fields are sized into the
// buffers below so that they always fit; strings are cut where the room ends.
class LineBuilder {
 public:
  LineBuilder(char* buffer, size_t capacity)
      : begin_(buffer), pos_(buffer), end_(buffer + capacity) {}

  size_t room() const { return static_cast<size_t>(end_ - pos_); }
  size_t size() const { return static_cast<size_t>(pos_ - begin_); }
  const char* data() const { return begin_; }

  void put(char c) {
    if (pos_ < end_) *pos_++ = c;
  }
  void put(const char* s) {
    while (*s != '\0') put(*s++);
  }
  void put_hex(uint64_t value) {
    char digits[16];
    int n = 0;
    do {
      digits[n++] = kHexDigits[value & 0xf];
      value >>= 4;
    } while (value != 0);
    while (n > 0) put(digits[--n]);
  }
  void put_decimal(uint64_t value) {
    char digits[20];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value != 0);
    while (n > 0) put(digits[--n]);
  }
  // Escapes s (format.h: %XX for '%' and bytes outside 0x21..0x7e), stopping before an escape
  // would eat into the last `keep` bytes of room, so that an escape is never cut in half.
  void put_escaped(const char* s, size_t keep) {
    if (s == nullptr) return;
    size_t n = 0;
    while (s[n] != '\0') ++n;
    put_escaped(std::string_view(s, n), keep);
  }
  void put_escaped(std::string_view s, size_t keep) {
    for (const char byte : s) {
      const auto c = static_cast<unsigned char>(byte);
      const bool plain = is_printable(c) && c != '%';
      if (room() < (plain ? 1u : 3u) + keep) return;
      if (plain) {
        put(static_cast<char>(c));
      } else {
        put('%');
        put(kHexDigits[c >> 4]);
        put(kHexDigits[c & 0xf]);
      }
    }
  }

 private:
  char* begin_;
  char* pos_;
  char* end_;
};

// An 's' line at full depth plus an 'e' line with every field and the longest API name:
// 's ' + id + 64 * (' ' + 16) + ' y' + 64 * (' ' + 8) + '\n'  and
// 'e' + 6 numbers + name + kFieldCount * (' kk=' + 16) + '\n'.
constexpr size_t kStackLineMax =
    2 + 8 + TraceWriter::kMaxStackDepth * 17 + 2 + TraceWriter::kMaxPythonDepth * 9 + 1;
constexpr size_t kEventLineMax = 1 + 6 * 17 + 1 + kMaxApiNameLength + kFieldCount * 20 + 1;
constexpr size_t kEventBufferSize = 2560;
static_assert(kStackLineMax + kEventLineMax <= kEventBufferSize);
// Records carrying a path, a command line or a message; truncated to fit.
constexpr size_t kTextBufferSize = 8192;
constexpr size_t kSmallBufferSize = 64;
constexpr size_t kBuildIdMax = 128;

// Copies the API name so that it can never break a line: bytes outside 0x21..0x7e become '?'.
void put_api_name(LineBuilder& out, std::string_view api) {
  if (api.empty()) {
    out.put('?');
    return;
  }
  if (api.size() > kMaxApiNameLength) api = api.substr(0, kMaxApiNameLength);
  for (char c : api) out.put(is_printable(static_cast<unsigned char>(c)) ? c : '?');
}

bool is_lower_hex(const char* s) {
  size_t n = 0;
  for (; s[n] != '\0'; ++n) {
    const char c = s[n];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) || n >= kBuildIdMax) return false;
  }
  return n > 0;
}

}  // namespace

TraceWriter::~TraceWriter() { abandon(); }

void TraceWriter::read_host(char* out, size_t capacity) {
  if (capacity == 0) return;
  const char* named = getenv("CAPGUARD_HOST");
  if (named != nullptr && named[0] != '\0') {
    size_t n = 0;
    for (; named[n] != '\0' && n + 1 < capacity; ++n) out[n] = named[n];
    out[n] = '\0';
  } else if (gethostname(out, capacity) != 0) {
    out[0] = '\0';
  }
  out[capacity - 1] = '\0';  // gethostname need not terminate a cut name
}

size_t TraceWriter::file_name_host(const char* host, char* out, size_t capacity) {
  size_t n = 0;
  if (capacity == 0) return 0;
  for (; host != nullptr && host[n] != '\0' && n < kMaxFileNameHost && n + 1 < capacity; ++n) {
    const char c = host[n];
    // Dots kept (gpu1.cluster became gpu1_cluster, which the manual's $(hostname)
    // never matched, and gpu1.a and gpu1_a shared one directory), but never first: no "." or
    // ".." and no hidden name.
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || (c == '.' && n != 0);
    out[n] = keep ? c : '_';
  }
  out[n] = '\0';
  return n;
}

bool TraceWriter::open(const char* dir, uint32_t pid, uint32_t ppid, uint64_t start_unix_ns,
                       const char* host) {
  ErrnoGuard keep_errno;
  abandon();
  if (dir == nullptr || dir[0] == '\0') return false;
  char name_host[kMaxFileNameHost + 1];
  const size_t host_length = file_name_host(host, name_host, sizeof(name_host));
  for (uint64_t suffix = 0; suffix < 1000; ++suffix) {
    LineBuilder name(path_, sizeof(path_));
    name.put(dir);
    name.put("/capguard.");
    name.put_decimal(pid);
    if (host_length != 0) {
      name.put('.');
      name.put(name_host);
    }
    if (suffix != 0) {
      name.put('.');
      name.put_decimal(suffix);
    }
    name.put(".trace");
    if (name.room() == 0) break;  // the path did not fit: refuse rather than open a prefix
    name.put('\0');
    int fd;
    do {
      fd = ::open(path_, O_CREAT | O_EXCL | O_APPEND | O_WRONLY | O_CLOEXEC, 0644);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) break;
    fd_.store(fd);

    char buffer[kSmallBufferSize * 2];
    LineBuilder out(buffer, sizeof(buffer));
    out.put("v ");
    out.put(kToolVersion);
    out.put(' ');
    out.put_hex(kFormatVersion);
    out.put("\np ");
    out.put_hex(pid);
    out.put(' ');
    out.put_hex(ppid);
    out.put(' ');
    out.put_hex(start_unix_ns);
    out.put('\n');
    write_all(out.data(), out.size());
    return true;
  }
  path_[0] = '\0';
  return false;
}

void TraceWriter::abandon() {
  const int fd = fd_.exchange(-1);
  if (fd >= 0) {
    ErrnoGuard keep_errno;
    ::close(fd);
  }
}

void TraceWriter::write_command(const char* command_line) {
  char buffer[kTextBufferSize];
  LineBuilder out(buffer, sizeof(buffer));
  out.put("c ");
  out.put_escaped(command_line, 1);
  out.put('\n');
  write_all(out.data(), out.size());
}

void TraceWriter::write_attach(bool ok, const char* message) {
  char buffer[kTextBufferSize];
  LineBuilder out(buffer, sizeof(buffer));
  out.put(ok ? "i ok " : "i failed ");
  out.put_escaped(message, 1);
  out.put('\n');
  write_all(out.data(), out.size());
}

void TraceWriter::write_cuda(uint32_t runtime, uint32_t driver, uint32_t cupti_major,
                             uint32_t cupti_api, const char* linkage, uint32_t other_runtime,
                             const char* runtime_path, const char* cupti_path) {
  char buffer[kTextBufferSize];
  LineBuilder out(buffer, sizeof(buffer));
  out.put("w ");
  for (uint32_t number : {runtime, driver, cupti_major, cupti_api}) {
    out.put_hex(number);
    out.put(' ');
  }
  out.put(linkage);
  out.put(' ');
  out.put_hex(other_runtime);
  out.put(' ');
  out.put_escaped(runtime_path != nullptr ? runtime_path : "", 1);
  out.put(' ');
  out.put_escaped(cupti_path != nullptr ? cupti_path : "", 1);
  out.put('\n');
  write_all(out.data(), out.size());
}

void TraceWriter::write_who_ran(const char* host, const char* const* names,
                                const char* const* values, size_t count) {
  char buffer[kTextBufferSize];
  LineBuilder out(buffer, sizeof(buffer));
  out.put("h ");
  if (host != nullptr) out.put_escaped(std::string_view(host).substr(0, kMaxHostLength), 1);
  for (size_t i = 0; i < count && i < kMaxLauncherVars; ++i) {
    if (names[i] == nullptr || values[i] == nullptr) continue;
    size_t length = 0;
    while (names[i][length] != '\0') ++length;
    if (out.room() < length + 2 + 1) break;  // the name, '=', a space, the '\n'
    out.put(' ');
    out.put(names[i]);
    out.put('=');
    out.put_escaped(std::string_view(values[i]).substr(0, kMaxLauncherValueLength), 1);
  }
  out.put('\n');
  write_all(out.data(), out.size());
}

void TraceWriter::write_cupti_client(uint64_t time_ns, uint32_t tid, CuptiClientEvent what,
                                     const char* name) {
  char buffer[kTextBufferSize];
  LineBuilder out(buffer, sizeof(buffer));
  out.put("k ");
  out.put_hex(time_ns);
  out.put(' ');
  out.put_hex(tid);
  out.put(' ');
  out.put(kCuptiClientEventWords[static_cast<int>(what)]);
  out.put(' ');
  out.put_escaped(name != nullptr ? name : "", 1);
  out.put('\n');
  write_all(out.data(), out.size());
}

void TraceWriter::write_module(uint64_t base, uint64_t start, uint64_t end, const char* path,
                               const char* build_id_hex) {
  char buffer[kTextBufferSize];
  LineBuilder out(buffer, sizeof(buffer));
  out.put("m ");
  out.put_hex(base);
  out.put(' ');
  out.put_hex(start);
  out.put(' ');
  out.put_hex(end);
  out.put(' ');
  out.put_escaped(path, kBuildIdMax + 2);
  // A build id that is not lower-case hex would make the line unreadable: leave it out.
  if (build_id_hex != nullptr && is_lower_hex(build_id_hex)) {
    out.put(' ');
    out.put(build_id_hex);
  }
  out.put('\n');
  write_all(out.data(), out.size());
}

void TraceWriter::write_event(const ApiEvent& event, const uint64_t* stack_addresses,
                              size_t stack_depth) {
  write_event(event, stack_addresses, stack_depth, nullptr, 0);
}

namespace {
// An 's' record (format.h), its frames clamped to the bounds.
void put_stack(LineBuilder& out, uint32_t id, const uint64_t* stack_addresses, size_t stack_depth,
               const uint32_t* python_frames, size_t python_depth) {
  using Bounds = TraceWriter;
  if (stack_depth > Bounds::kMaxStackDepth) stack_depth = Bounds::kMaxStackDepth;
  if (python_depth > Bounds::kMaxPythonDepth) python_depth = Bounds::kMaxPythonDepth;
  out.put("s ");
  out.put_hex(id);
  for (size_t i = 0; i < stack_depth; ++i) {
    out.put(' ');
    out.put_hex(stack_addresses[i]);
  }
  if (python_depth > 0) out.put(" y");
  for (size_t i = 0; i < python_depth; ++i) {
    out.put(' ');
    out.put_hex(python_frames[i]);
  }
  out.put('\n');
}
}  // namespace

void TraceWriter::write_stack(uint32_t id, const uint64_t* stack_addresses, size_t stack_depth,
                              const uint32_t* python_frames, size_t python_depth) {
  if (id == 0 || (stack_depth == 0 && python_depth == 0)) return;
  char buffer[kEventBufferSize];
  LineBuilder out(buffer, sizeof(buffer));
  put_stack(out, id, stack_addresses, stack_addresses == nullptr ? 0 : stack_depth, python_frames,
            python_frames == nullptr ? 0 : python_depth);
  write_all(out.data(), out.size());
}

void TraceWriter::write_event(const ApiEvent& event, const uint64_t* stack_addresses,
                              size_t stack_depth, const uint32_t* python_frames,
                              size_t python_depth) {
  char buffer[kEventBufferSize];
  LineBuilder out(buffer, sizeof(buffer));
  if (python_frames == nullptr) python_depth = 0;
  // No addresses and no Python frames: the event uses a stack defined earlier.
  const bool refers_back = stack_addresses == nullptr && python_depth == 0;
  if (stack_addresses == nullptr) stack_depth = 0;
  const bool defines_stack = stack_depth > 0 || python_depth > 0;
  const bool has_stack = event.stack != 0 && (refers_back || defines_stack);
  if (has_stack && defines_stack)
    put_stack(out, event.stack, stack_addresses, stack_depth, python_frames, python_depth);
  out.put("e ");
  out.put_hex(event.seq);
  out.put(' ');
  out.put_hex(event.time_ns);
  out.put(' ');
  out.put_hex(event.tid);
  out.put(' ');
  put_api_name(out, event.api);
  out.put(' ');
  out.put_hex(static_cast<uint32_t>(event.result));
  out.put(' ');
  out.put_hex(has_stack ? event.stack : 0);
  // The set fields in the order of trace/event_fields.def: " key=hex" each.
#define CAPGUARD_EVENT_FIELD(Name, key, member, ...)  \
  if (event.has(Field::Name)) {                       \
    out.put(" " #key "=");                            \
    out.put_hex(static_cast<uint64_t>(event.member)); \
  }
#include "trace/event_fields.def"
  out.put('\n');
  write_all(out.data(), out.size());
}

void TraceWriter::write_python_frame(uint32_t id, uint32_t line, std::string_view file,
                                     std::string_view function) {
  char buffer[kTextBufferSize];
  LineBuilder out(buffer, sizeof(buffer));
  out.put("y ");
  out.put_hex(id);
  out.put(' ');
  out.put_hex(line);
  out.put(' ');
  // The file may take most of the room; the function keeps what it needs to stay whole.
  out.put_escaped(file, kTextBufferSize / 4 + 2);
  out.put(' ');
  out.put_escaped(function, 1);
  out.put('\n');
  write_all(out.data(), out.size());
}

void TraceWriter::write_range_begin(uint64_t seq, uint64_t time_ns, uint32_t tid, uint64_t id,
                                    std::string_view domain, std::string_view name) {
  char buffer[kTextBufferSize];
  LineBuilder out(buffer, sizeof(buffer));
  out.put("r ");
  out.put_hex(seq);
  out.put(' ');
  out.put_hex(time_ns);
  out.put(' ');
  out.put_hex(tid);
  out.put(' ');
  out.put_hex(id);
  out.put(' ');
  if (domain.size() > kMaxRangeNameLength) domain = domain.substr(0, kMaxRangeNameLength);
  if (name.size() > kMaxRangeNameLength) name = name.substr(0, kMaxRangeNameLength);
  out.put_escaped(domain, kTextBufferSize / 2);  // both fit: 3 * 256 bytes each at most
  out.put(' ');
  out.put_escaped(name, 1);
  out.put('\n');
  write_all(out.data(), out.size());
}

void TraceWriter::write_rehearse(std::string_view glob) {
  char buffer[kTextBufferSize];
  LineBuilder out(buffer, sizeof(buffer));
  out.put("q ");
  out.put_escaped(glob.substr(0, kMaxRangeNameLength), 1);
  out.put('\n');
  write_all(out.data(), out.size());
}

void TraceWriter::write_range_end(uint64_t seq, uint64_t time_ns, uint32_t tid, uint64_t id) {
  char buffer[2 + 4 * 17 + 1];  // "R " and four hex numbers
  LineBuilder out(buffer, sizeof(buffer));
  out.put("R ");
  out.put_hex(seq);
  out.put(' ');
  out.put_hex(time_ns);
  out.put(' ');
  out.put_hex(tid);
  out.put(' ');
  out.put_hex(id);
  out.put('\n');
  write_all(out.data(), out.size());
}

void TraceWriter::write_thread_exit(uint32_t tid, uint64_t time_ns) {
  char buffer[kSmallBufferSize];
  LineBuilder out(buffer, sizeof(buffer));
  out.put("x ");
  out.put_hex(tid);
  out.put(' ');
  out.put_hex(time_ns);
  out.put('\n');
  write_all(out.data(), out.size());
}

void TraceWriter::write_end(uint64_t time_ns, int exit_status) {
  char buffer[kSmallBufferSize];
  LineBuilder out(buffer, sizeof(buffer));
  out.put("z ");
  out.put_hex(time_ns);
  out.put(' ');
  out.put_hex(static_cast<uint32_t>(exit_status));
  out.put('\n');
  write_all(out.data(), out.size());
}

// One write(2) per record keeps records whole on an O_APPEND descriptor. A short write only
// happens when the disk is full or a signal interrupted it after some bytes went out; the
// rest is still sent, since a torn trace is better than a silently shortened one.
void TraceWriter::write_all(const char* data, size_t size) {
  const int fd = fd_.load(std::memory_order_relaxed);
  if (fd < 0) return;
  ErrnoGuard keep_errno;
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (n == 0) return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

}  // namespace capguard::trace
