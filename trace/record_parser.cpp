#include "trace/record_parser.h"

#include <array>
#include <limits>
#include <mutex>
#include <unordered_set>

namespace capguard::trace {
namespace {

constexpr uint64_t kU32 = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kU64 = std::numeric_limits<uint64_t>::max();
// The largest value each event field may hold, in the order of kFieldKeys.
constexpr uint64_t kFieldMax[] = {kU64, kU32, 2,    2,    kU64, kU64, kU32,
                                  2,    2,    kU32, kU64, kU64, kU64, 1};
static_assert(std::size(kFieldMax) == kFieldCount);

// Digit values; -1 for anything else. Numbers are lower-case only, escapes take both cases.
constexpr std::array<int8_t, 256> make_hex_table(bool upper_too) {
  std::array<int8_t, 256> table{};
  for (auto& v : table) v = -1;
  for (int i = 0; i < 10; ++i) table['0' + i] = static_cast<int8_t>(i);
  for (int i = 0; i < 6; ++i) {
    table['a' + i] = static_cast<int8_t>(10 + i);
    if (upper_too) table['A' + i] = static_cast<int8_t>(10 + i);
  }
  return table;
}
constexpr auto kLowerHex = make_hex_table(false);
constexpr auto kAnyHex = make_hex_table(true);

bool is_printable(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x21 && u <= 0x7e;
}

enum class Hex { Ok, NotHex, Overflow };

Hex parse_hex(std::string_view s, uint64_t& out) {
  if (s.empty()) return Hex::NotHex;
  uint64_t value = 0;
  for (char c : s) {
    const int digit = kLowerHex[static_cast<unsigned char>(c)];
    if (digit < 0) return Hex::NotHex;
    if ((value >> 60) != 0) return Hex::Overflow;
    value = (value << 4) | static_cast<uint64_t>(digit);
  }
  out = value;
  return Hex::Ok;
}

// Quotes a piece of a damaged line for a message: short, and with no raw control bytes.
std::string quote(std::string_view s) {
  constexpr size_t kMax = 40;
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c <= 0x7e) {
      out += static_cast<char>(c);
    } else {
      constexpr char kDigits[] = "0123456789abcdef";
      out += "\\x";
      out += kDigits[c >> 4];
      out += kDigits[c & 0xf];
    }
  }
  if (s.size() > kMax) out += "...";
  return out + "'";
}

void assign_field(ApiEvent& e, int index, uint64_t v) {
  switch (static_cast<Field>(1u << index)) {
    case Field::Stream:
      e.stream = v;
      break;
    case Field::StreamFlags:
      e.stream_flags = static_cast<uint32_t>(v);
      break;
    case Field::StatusBefore:
      e.status_before = static_cast<CaptureStatus>(v);
      break;
    case Field::StatusAfter:
      e.status_after = static_cast<CaptureStatus>(v);
      break;
    case Field::CaptureId:
      e.capture_id = v;
      break;
    case Field::Event:
      e.event = v;
      break;
    case Field::Flags:
      e.flags = static_cast<uint32_t>(v);
      break;
    case Field::Mode:
      e.mode = static_cast<CaptureMode>(v);
      break;
    case Field::PrevMode:
      e.prev_mode = static_cast<CaptureMode>(v);
      break;
    case Field::CopyKind:
      e.copy_kind = static_cast<uint32_t>(v);
      break;
    case Field::Graph:
      e.graph = v;
      break;
    case Field::GraphExec:
      e.graph_exec = v;
      break;
    case Field::Nodes:
      e.nodes = v;
      break;
    case Field::Domain:
      e.domain = static_cast<ApiDomain>(v);
      break;
  }
}

// The process-wide name storage. Never destroyed: names handed out stay valid until exit,
// static destructors included.
struct InternedNames {
  std::mutex mutex;
  std::unordered_set<std::string> names;  // nodes never move, so views into them stay valid
};
InternedNames& interned_names() {
  static auto* names = new InternedNames;
  return *names;
}

}  // namespace

std::string_view ApiNames::intern(std::string_view name) {
  if (name == last_) return last_;
  if (auto it = cache_.find(name); it != cache_.end()) return last_ = it->second;
  if (cache_.size() >= kMaxPerTrace) {
    error_ = "more than " + std::to_string(kMaxPerTrace) + " distinct API names";
    return {};
  }
  InternedNames& global = interned_names();
  std::string_view stored;
  {
    std::lock_guard lock(global.mutex);
    auto it = global.names.find(std::string(name));
    if (it == global.names.end()) {
      if (global.names.size() >= kMaxPerProcess) {
        error_ =
            "more than " + std::to_string(kMaxPerProcess) + " distinct API names in all traces";
        return {};
      }
      it = global.names.emplace(name).first;
    }
    stored = *it;
  }
  cache_.emplace(stored, stored);
  return last_ = stored;
}

// The fields of one record, after its type character: separated by exactly one space, so an
// empty field (an empty escaped string) is representable.
class RecordParser::Cursor {
 public:
  explicit Cursor(std::string_view line)
      : pos_(line.data() + std::min<size_t>(2, line.size())),
        end_(line.data() + line.size()),
        done_(line.size() < 2) {}

  bool done() const { return done_; }
  bool next(std::string_view& field) {
    if (done_) return false;
    const char* start = pos_;
    while (pos_ != end_ && *pos_ != ' ') ++pos_;
    field = std::string_view(start, static_cast<size_t>(pos_ - start));
    if (pos_ == end_) {
      done_ = true;
    } else {
      ++pos_;
    }
    return true;
  }

 private:
  const char* pos_;
  const char* end_;
  bool done_;
};

// Messages name the record they are about, when the line got that far.
bool RecordParser::fail(std::string message) {
  error_ = *record_name_ == '\0' ? std::move(message)
                                 : std::string(record_name_) + " record: " + std::move(message);
  return false;
}

bool RecordParser::read_hex(Cursor& in, const char* what, uint64_t max, uint64_t& out) {
  std::string_view field;
  if (!in.next(field)) return fail(std::string(what) + " is missing");
  switch (parse_hex(field, out)) {
    case Hex::Ok:
      if (out <= max) return true;
      [[fallthrough]];
    case Hex::Overflow:
      return fail(std::string(what) + " is out of range: " + quote(field));
    case Hex::NotHex:
      break;
  }
  return fail(std::string(what) + " is not lower-case hex: " + quote(field));
}

template <class T>
bool RecordParser::read_number(Cursor& in, const char* what, T& out) {
  uint64_t value = 0;
  if (!read_hex(in, what, std::numeric_limits<T>::max(), value)) return false;
  out = static_cast<T>(value);
  return true;
}

bool RecordParser::read_escaped(Cursor& in, const char* what, std::string& out) {
  std::string_view field;
  if (!in.next(field)) return fail(std::string(what) + " is missing");
  out.clear();
  for (size_t i = 0; i < field.size(); ++i) {
    const char c = field[i];
    if (!is_printable(c)) {
      return fail(std::string(what) + " contains an unescaped byte: " + quote(field.substr(i, 1)));
    }
    if (c != '%') {
      out += c;
      continue;
    }
    const int high = i + 1 < field.size() ? kAnyHex[static_cast<unsigned char>(field[i + 1])] : -1;
    const int low = i + 2 < field.size() ? kAnyHex[static_cast<unsigned char>(field[i + 2])] : -1;
    if (high < 0 || low < 0) {
      return fail(std::string(what) + " has a bad %-escape: " + quote(field.substr(i, 3)));
    }
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return true;
}

bool RecordParser::no_more_fields(Cursor& in) {
  std::string_view extra;
  if (!in.next(extra)) return true;
  return fail("unexpected field " + quote(extra));
}

const char* RecordParser::record_name(char type) {
  switch (type) {
    case 'e':
      return "event";
    case 's':
      return "stack";
    case 'v':
      return "header";
    case 'p':
      return "process";
    case 'c':
      return "command";
    case 'i':
      return "attach";
    case 'm':
      return "module";
    case 'x':
      return "thread-exit";
    case 'z':
      return "end";
    default:
      return nullptr;
  }
}

bool RecordParser::parse(std::string_view line) {
  ++records_;
  record_name_ = "";
  if (line.empty()) return fail("empty line");
  const char type = line[0];
  record_name_ = record_name(type);
  if (record_name_ == nullptr) {
    record_name_ = "";
    return fail("unknown record type " + quote(line.substr(0, 1)));
  }
  if (line.size() > 1 && line[1] != ' ') return fail("expected a space after the record type");
  if (records_ == 1 && type != 'v') return fail("the first record must be the 'v' header");
  if (records_ == 2 && type != 'p') return fail("the header must be followed by the 'p' record");
  Cursor in(line);
  switch (type) {
    case 'e':
      return parse_event(in);
    case 's':
      return parse_stack(in);
    case 'v':
      return parse_header(in);
    case 'p':
      return parse_process(in);
    case 'c':
      return parse_command(in);
    case 'i':
      return parse_attach(in);
    case 'm':
      return parse_module(in);
    case 'x':
      return parse_thread_exit(in);
    default:
      return parse_end(in);
  }
}

bool RecordParser::finish() {
  record_name_ = "header";
  if (records_ == 1) return fail("the trace ends before the 'p' record");
  return true;
}

bool RecordParser::parse_header(Cursor& in) {
  if (records_ != 1) return fail("a second header");
  std::string_view tool_version;
  if (!in.next(tool_version) || tool_version.empty()) return fail("tool version is missing");
  for (char c : tool_version) {
    if (!is_printable(c)) return fail("tool version is not printable: " + quote(tool_version));
  }
  uint64_t format_version = 0;
  if (!read_hex(in, "format version", kU32, format_version)) return false;
  // Checked before anything else that follows, so a newer format always gets this message.
  if (format_version > static_cast<uint64_t>(kFormatVersion)) {
    error_ = "written by capguard " + std::string(tool_version) + " (trace format " +
             std::to_string(format_version) +
             "); this capguard reads format <= " + std::to_string(kFormatVersion) +
             ": upgrade capguard";
    return false;
  }
  if (format_version == 0) return fail("unsupported trace format 0");
  if (!no_more_fields(in)) return false;
  sink_.on_header(tool_version, static_cast<int>(format_version));
  return true;
}

bool RecordParser::parse_process(Cursor& in) {
  if (records_ != 2) return fail("a second process record");
  ProcessRecord p;
  if (!read_number(in, "pid", p.pid) || !read_number(in, "ppid", p.ppid) ||
      !read_number(in, "start time", p.start_unix_ns) || !no_more_fields(in)) {
    return false;
  }
  sink_.on_process(p);
  return true;
}

bool RecordParser::parse_command(Cursor& in) {
  if (seen_command_) return fail("a second command record");
  seen_command_ = true;
  if (!read_escaped(in, "command line", text_) || !no_more_fields(in)) return false;
  sink_.on_command(text_);
  return true;
}

bool RecordParser::parse_attach(Cursor& in) {
  std::string_view state;
  if (!in.next(state)) return fail("state is missing");
  if (state != "ok" && state != "failed") {
    return fail("state must be 'ok' or 'failed', not " + quote(state));
  }
  if (!read_escaped(in, "message", text_) || !no_more_fields(in)) return false;
  sink_.on_attach(state == "ok", text_);
  return true;
}

bool RecordParser::parse_module(Cursor& in) {
  ModuleRecord m;
  if (!read_number(in, "base", m.base) || !read_number(in, "start", m.start) ||
      !read_number(in, "end", m.end) || !read_escaped(in, "path", text_)) {
    return false;
  }
  if (m.start > m.end) return fail("start is after end");
  if (in.next(m.build_id)) {
    uint64_t ignored;
    for (char c : m.build_id) {
      if (parse_hex(std::string_view(&c, 1), ignored) != Hex::Ok) {
        return fail("build id is not lower-case hex: " + quote(m.build_id));
      }
    }
    if (m.build_id.empty()) return fail("build id is empty");
    if (!no_more_fields(in)) return false;
  }
  m.path = text_;
  sink_.on_module(m);
  return true;
}

bool RecordParser::parse_stack(Cursor& in) {
  StackRecord s;
  if (!read_number(in, "id", s.id)) return false;
  if (s.id == 0) return fail("id 0 is reserved for 'no stack'");
  addresses_.clear();
  while (!in.done()) {
    uint64_t address = 0;
    if (!read_hex(in, "address", kU64, address)) return false;
    addresses_.push_back(address);
  }
  if (addresses_.empty()) return fail("no addresses");
  s.addresses = addresses_;
  sink_.on_stack(s);
  return true;
}

bool RecordParser::parse_event(Cursor& in) {
  event_ = ApiEvent{};
  std::string_view api;
  if (!read_number(in, "seq", event_.seq) || !read_number(in, "time", event_.time_ns) ||
      !read_number(in, "tid", event_.tid)) {
    return false;
  }
  if (!in.next(api) || api.empty()) return fail("api name is missing");
  if (api.size() > kMaxApiNameLength) return fail("api name is too long: " + quote(api));
  for (char c : api) {
    if (!is_printable(c)) return fail("api name has a byte it may not have: " + quote(api));
  }
  uint32_t result = 0;
  if (!read_number(in, "result", result) || !read_number(in, "stack", event_.stack)) return false;
  event_.result = static_cast<int32_t>(result);
  std::string_view field;
  while (in.next(field)) {
    if (!parse_event_field(field)) return false;
  }
  event_.api = api_names_.intern(api);
  if (event_.api.empty()) return fail(api_names_.error());
  sink_.on_event(event_);
  return true;
}

bool RecordParser::parse_event_field(std::string_view field) {
  const size_t equals = field.find('=');
  if (equals == std::string_view::npos || equals == 0) {
    return fail("field is not key=hex: " + quote(field));
  }
  const std::string_view key = field.substr(0, equals);
  int index = 0;
  while (index < kFieldCount && key != kFieldKeys[index]) ++index;
  if (index == kFieldCount) return true;  // a newer writer's field: ignored
  const auto bit = static_cast<Field>(1u << index);
  if (event_.has(bit)) return fail("field " + quote(key) + " appears twice");
  uint64_t value = 0;
  const Hex status = parse_hex(field.substr(equals + 1), value);
  if (status == Hex::NotHex) return fail("field value is not lower-case hex: " + quote(field));
  if (status == Hex::Overflow || value > kFieldMax[index]) {
    return fail("field value is out of range: " + quote(field));
  }
  assign_field(event_, index, value);
  event_.set(bit);
  return true;
}

bool RecordParser::parse_thread_exit(Cursor& in) {
  uint32_t tid = 0;
  uint64_t time_ns = 0;
  if (!read_number(in, "tid", tid) || !read_number(in, "time", time_ns) || !no_more_fields(in)) {
    return false;
  }
  sink_.on_thread_exit(tid, time_ns);
  return true;
}

bool RecordParser::parse_end(Cursor& in) {
  if (seen_end_) return fail("a second end record");
  seen_end_ = true;
  uint64_t time_ns = 0;
  uint32_t status = 0;
  if (!read_number(in, "time", time_ns) || !read_number(in, "exit status", status) ||
      !no_more_fields(in)) {
    return false;
  }
  sink_.on_end(time_ns, static_cast<int>(status));
  return true;
}

}  // namespace capguard::trace
