#include "trace/record_parser.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "trace/event_fast_path.h"
#include "trace/event_fields.h"
#include "trace/reset.h"

namespace capguard::trace {
namespace {

int field_index(std::string_view key) {
  if (key.size() != 2 || key[0] < 'a' || key[0] > 'z' || key[1] < 'a' || key[1] > 'z') return -1;
  return event_fields::index_of(key[0], key[1]);
}

bool is_printable(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x21 && u <= 0x7e;
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

// Kept out of line so that the parsing fast path stays small.
[[gnu::cold, gnu::noinline]] std::string number_problem(Hex status, const char* what,
                                                        std::string_view field) {
  switch (status) {
    case Hex::Missing:
      return std::string(what) + " is missing";
    case Hex::NotHex:
      return std::string(what) + " is not lower-case hex: " + quote(field);
    case Hex::Ok:
    case Hex::Overflow:
      break;
  }
  return std::string(what) + " is out of range: " + quote(field);
}

}  // namespace

// Messages name the record they are about, when the line got that far.
bool RecordParser::fail(std::string message) {
  error_ = *record_name_ == '\0' ? std::move(message)
                                 : std::string(record_name_) + " record: " + std::move(message);
  return false;
}

template <class T>
bool RecordParser::read_number(Cursor& in, const char* what, T& out) {
  uint64_t value = 0;
  std::string_view field;
  const Hex status = in.next_hex(value, field);
  if (status == Hex::Ok && value <= std::numeric_limits<T>::max()) [[likely]] {
    out = static_cast<T>(value);
    return true;
  }
  return fail(number_problem(status, what, field));
}

bool RecordParser::read_escaped(Cursor& in, const char* what, std::string& out) {
  std::string_view field;
  if (!in.next(field)) return fail(std::string(what) + " is missing");
  return unescape(field, what, out);
}

bool RecordParser::unescape(std::string_view field, const char* what, std::string& out) {
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
    case 'y':
      return "python-frame";
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
    case 'g':
      return "graph-node";
    case 'G':
      return "graph";
    case 'u':
      return "graph-update";
    case 'k':
      return "cupti-client";
    case 'r':
      return "range-begin";
    case 'R':
      return "range-end";
    case 'q':
      return "rehearse";
    case 'w':
      return "cuda";
    case 'h':
      return "who-ran";
    case 'f':
      return "kernel-name";
    case 'n':
      return "launch-count";
    case 'a':
      return "kernel-args";
    default:
      return nullptr;
  }
}

bool RecordParser::misplaced_event() {
  record_name_ = record_name('e');
  return fail(records_ == 1 ? "the first record must be the 'v' header"
                            : "the header must be followed by the 'p' record");
}

bool RecordParser::take_new_event(ApiEvent& event) {
  if (++records_ <= 2) {
    event.api = {};  // not interned: as when the name is refused, the caller keeps it aside
    return misplaced_event();
  }
  event.api = api_names_.intern(event.api);
  if (event.api.empty()) {  // where the careful parser, which parse() turns to then, stops
    record_name_ = record_name('e');
    return fail(api_names_.error());
  }
  sink_.on_event(event);
  return true;
}

bool RecordParser::parse_other(std::string_view line, bool split) {
  if (fast_events_ && records_ > 2 && is_event_line(line)) {
    reset(event_);
    std::string_view api;
    if (parse_event_fast(line, event_, api)) {
      event_.api = api_names_.intern(api);
      if (!event_.api.empty()) {
        if (split) tails_.store(event_);
        sink_.on_event(event_);
        return true;
      }
    }  // else the careful parser below says what is wrong
  }
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
  if (type == 'g' || type == 'G' || type == 'u') {
    if (graphs_.parse(line, sink_, error_)) return true;
    record_name_ = "";
    return false;
  }
  if (type == 'f' || type == 'n' || type == 'a') {
    if (kernels_.parse(line, sink_, error_)) return true;
    record_name_ = "";
    return false;
  }
  Cursor in(line);
  switch (type) {
    case 'e':
      return parse_event(in);
    case 's':
      return parse_stack(in);
    case 'y':
      return parse_python_frame(in);
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
    case 'k':
      return parse_cupti_client(in);
    case 'r':
    case 'R':
      return parse_range(in, type == 'r');
    case 'q':
      return parse_rehearse(in);
    case 'w':
      return parse_cuda(in);
    case 'h':
      return parse_who_ran(in);
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
  uint32_t format_version = 0;
  if (!read_number(in, "format version", format_version)) return false;
  // Checked before anything else that follows, so a newer format always gets this message.
  if (format_version > static_cast<uint32_t>(kFormatVersion)) {
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

bool RecordParser::parse_cuda(Cursor& in) {
  CudaRecord w;
  if (!read_number(in, "runtime", w.runtime) || !read_number(in, "driver", w.driver) ||
      !read_number(in, "CUPTI major", w.cupti_major) ||
      !read_number(in, "CUPTI API version", w.cupti_api)) {
    return false;
  }
  if (!in.next(w.linkage)) return fail("linkage is missing");
  if (w.linkage != "shared" && w.linkage != "static" && w.linkage != "unknown")
    return fail("linkage must be 'shared', 'static' or 'unknown', not " + quote(w.linkage));
  if (!read_number(in, "other runtime", w.other_runtime)) return false;
  if (!read_escaped(in, "runtime path", text_)) return false;
  cuda_runtime_path_ = text_;
  if (!read_escaped(in, "CUPTI path", text_) || !no_more_fields(in)) return false;
  w.runtime_path = cuda_runtime_path_;
  w.cupti_path = text_;
  sink_.on_cuda(w);
  return true;
}

bool RecordParser::parse_cupti_client(Cursor& in) {
  CuptiClientRecord k;
  if (!read_number(in, "time", k.time_ns) || !read_number(in, "tid", k.tid)) return false;
  std::string_view what;
  if (!in.next(what)) return fail("what is missing");
  bool known = false;
  for (size_t i = 0; i < std::size(kCuptiClientEventWords) && !known; ++i) {
    if (what == kCuptiClientEventWords[i]) k.what = static_cast<CuptiClientEvent>(i), known = true;
  }
  if (!known) return fail("unknown CUPTI client event " + quote(what));
  if (!read_escaped(in, "name", text_) || !no_more_fields(in)) return false;
  k.name = text_;
  sink_.on_cupti_client(k);
  return true;
}

bool RecordParser::parse_rehearse(Cursor& in) {
  if (!read_escaped(in, "glob", text_) || !no_more_fields(in)) return false;
  sink_.on_rehearse(text_);
  return true;
}

// 'h' (v8): the host, then NAME=value pairs; names outside trace/launcher_vars.def are skipped.
bool RecordParser::parse_who_ran(Cursor& in) {
  static constexpr std::string_view kKnown[] = {
#define CAPGUARD_LAUNCHER_VAR(name, role) #name,
#include "trace/launcher_vars.def"
  };
  if (!read_escaped(in, "host", text_)) return false;
  if (text_.size() > kMaxHostLength) return fail("host name is longer than 255 bytes");
  launcher_values_.clear();
  launcher_vars_.clear();
  std::vector<std::string_view> names;
  while (!in.done()) {
    if (names.size() >= kMaxLauncherVars) return fail("more than 32 launcher variables");
    // Each pair is one field: the name up to '=', the escaped value after it.
    std::string_view field;
    if (!in.next(field)) break;
    const size_t equals = field.find('=');
    if (equals == std::string_view::npos || equals == 0)
      return fail("launcher variable is not NAME=value: " + quote(field));
    const std::string_view name = field.substr(0, equals);
    std::string value;
    if (!unescape(field.substr(equals + 1), "launcher variable value", value)) return false;
    if (value.size() > kMaxLauncherValueLength) return fail("launcher variable value too long");
    if (std::find(std::begin(kKnown), std::end(kKnown), name) == std::end(kKnown)) continue;
    names.push_back(name);
    launcher_values_.push_back(std::move(value));
  }
  for (size_t i = 0; i < names.size(); ++i)
    launcher_vars_.push_back({names[i], launcher_values_[i]});
  WhoRanRecord w;
  w.host = text_;
  w.vars = launcher_vars_;
  sink_.on_who_ran(w);
  return true;
}

bool RecordParser::parse_range(Cursor& in, bool begin) {
  RangeRecord r;
  if (!read_number(in, "seq", r.seq) || !read_number(in, "time", r.time_ns) ||
      !read_number(in, "tid", r.tid) || !read_number(in, "range", r.id)) {
    return false;
  }
  if (r.id == 0) return fail("range id 0");
  if (begin) {
    if (!read_escaped(in, "domain", text2_) || !read_escaped(in, "name", text_)) return false;
    r.domain = text2_;
    r.name = text_;
  }
  if (!no_more_fields(in)) return false;
  if (begin) {
    sink_.on_range_begin(r);
  } else {
    sink_.on_range_end(r);
  }
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
    for (char c : m.build_id) {
      if (kLowerHex[static_cast<unsigned char>(c)] < 0) {
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

bool RecordParser::parse_python_frame(Cursor& in) {
  PythonFrameRecord f;
  if (!read_number(in, "id", f.id) || !read_number(in, "line", f.line) ||
      !read_escaped(in, "file", text_) || !read_escaped(in, "function", text2_) ||
      !no_more_fields(in)) {
    return false;
  }
  if (f.id == 0) return fail("id 0 is reserved");
  f.file = text_;
  f.function = text2_;
  sink_.on_python_frame(f);
  return true;
}

// Native addresses, then optionally the marker 'y' and Python frame ids (format.h).
bool RecordParser::parse_stack(Cursor& in) {
  StackRecord s;
  if (!read_number(in, "id", s.id)) return false;
  if (s.id == 0) return fail("id 0 is reserved for 'no stack'");
  addresses_.clear();
  python_frames_.clear();
  bool python = false;
  while (!in.done()) {
    if (!python && in.peek() == 'y') {
      std::string_view marker;
      in.next(marker);
      if (marker != "y") return fail("address is not lower-case hex: " + quote(marker));
      python = true;
      continue;
    }
    if (python) {
      uint32_t id = 0;
      if (!read_number(in, "python frame id", id)) return false;
      if (id == 0) return fail("python frame id 0 is reserved");
      python_frames_.push_back(id);
      continue;
    }
    uint64_t address = 0;
    if (!read_number(in, "address", address)) return false;
    addresses_.push_back(address);
  }
  if (python && python_frames_.empty()) return fail("no python frames after 'y'");
  if (addresses_.empty() && python_frames_.empty()) return fail("no addresses");
  s.addresses = addresses_;
  s.python_frames = python_frames_;
  sink_.on_stack(s);
  return true;
}

bool RecordParser::parse_event(Cursor& in) {
  reset(event_);
  std::string_view api;
  if (!read_number(in, "seq", event_.seq) || !read_number(in, "time", event_.time_ns) ||
      !read_number(in, "tid", event_.tid)) {
    return false;
  }
  bool printable = false;
  if (!in.next_printable(api, printable) || api.empty()) return fail("api name is missing");
  if (!printable) return fail("api name has a byte it may not have: " + quote(api));
  if (api.size() > kMaxApiNameLength) return fail("api name is too long: " + quote(api));
  uint32_t result = 0;
  if (!read_number(in, "result", result) || !read_number(in, "stack", event_.stack)) return false;
  event_.result = static_cast<int32_t>(result);
  while (!in.done()) {
    if (!parse_event_field(in)) return false;
  }
  event_.api = api_names_.intern(api);
  if (event_.api.empty()) return fail(api_names_.error());
  sink_.on_event(event_);
  return true;
}

bool RecordParser::parse_event_field(Cursor& in) {
  std::string_view key, field;
  uint64_t value = 0;
  const Hex status = in.next_key_value(key, value, field);
  if (key.empty()) return fail("field is not key=hex: " + quote(field));
  const int index = field_index(key);
  if (index < 0) return true;  // a newer writer's field: ignored
  const auto bit = static_cast<Field>(1u << index);
  if (event_.has(bit)) return fail("field " + quote(key) + " appears twice");
  if (status == Hex::NotHex) return fail("field value is not lower-case hex: " + quote(field));
  if (status == Hex::Overflow || value > event_fields::kMax[index]) {
    return fail("field value is out of range: " + quote(field));
  }
  event_fields::assign(event_, index, value);
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
