// libFuzzer target: any bytes given to read_trace must end in a clean result or one ReadError,
// never a crash, a hang, a sanitizer report or unbounded memory; the event fast path and the
// parse-ahead helpers must agree with the careful parser and the one-thread reader.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "trace/parse_ahead.h"
#include "trace/reader.h"
#include "trace/record_parser.h"

namespace {

// Touches everything the reader hands out, so that a dangling view or span is caught by ASan.
// Its sum depends on the order of what it was given (two readers' calls are compared by it).
struct TouchingSink : capguard::trace::TraceSink {
  uint64_t sum = 0;
  void touch(std::string_view s) {
    for (char c : s) sum = sum * 1099511628211ull + static_cast<unsigned char>(c);
  }
  void on_skipped_line(const capguard::trace::ReadError& e) override { touch(e.to_string()); }
  void on_header(std::string_view tool_version, int format_version) override {
    touch(tool_version);
    sum += static_cast<uint64_t>(format_version);
  }
  void on_command(std::string_view command_line) override { touch(command_line); }
  void on_attach(bool ok, std::string_view message) override {
    touch(message);
    sum += ok;
  }
  void on_module(const capguard::trace::ModuleRecord& m) override {
    touch(m.path);
    touch(m.build_id);
    sum += m.base + m.start + m.end;
  }
  void on_stack(const capguard::trace::StackRecord& s) override {
    for (uint64_t a : s.addresses) sum += a;
  }
  void on_event(const capguard::trace::ApiEvent& e) override {
    touch(e.api);
    sum += e.seq + e.fields + e.stream + static_cast<uint64_t>(e.status_after);
  }
  void on_graph_node(const capguard::trace::GraphNodeRecord& r) override {
    touch(r.name);
    for (const capguard::trace::GraphRef& ref : r.refs) sum += ref.address + ref.index;
  }
  void on_graph(const capguard::trace::GraphRecord& r) override { sum += r.exec + r.nodes; }
  void on_cupti_client(const capguard::trace::CuptiClientRecord& k) override {
    touch(k.name);
    sum += k.time_ns + k.tid + static_cast<uint64_t>(k.what);
  }
  void on_graph_update(const capguard::trace::GraphUpdateRecord& r) override {
    touch(r.name);
    sum += r.seq + r.result;
  }
};

struct EventSink : capguard::trace::TraceSink {
  std::vector<capguard::trace::ApiEvent> events;
  void on_event(const capguard::trace::ApiEvent& e) override { events.push_back(e); }
};

bool same(const capguard::trace::ApiEvent& a, const capguard::trace::ApiEvent& b) {
  bool same_fields = true;  // every optional field of trace/event_fields.def
#define CAPGUARD_EVENT_FIELD(Name, key, member, ...) \
  same_fields = same_fields && a.member == b.member;
#include "trace/event_fields.def"
  return a.seq == b.seq && a.time_ns == b.time_ns && a.tid == b.tid && a.api == b.api &&
         a.result == b.result && a.stack == b.stack && a.fields == b.fields && same_fields;
}

// The event fast path must accept exactly what the careful parser accepts, with the same
// values, and fail with the same message: run both over the same lines and compare.
void compare_fast_and_careful_paths(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  text.append(32, '\0');  // the padding read_trace's buffer guarantees
  EventSink fast_events, careful_events;
  capguard::trace::RecordParser fast(fast_events, true), careful(careful_events, false);
  for (size_t pos = 0;;) {
    const void* newline = std::memchr(text.data() + pos, '\n', size - pos);
    if (newline == nullptr) break;
    const size_t end = static_cast<size_t>(static_cast<const char*>(newline) - text.data());
    if (end - pos > capguard::trace::kMaxLineLength) break;
    const std::string_view line(text.data() + pos, end - pos);
    const bool fast_ok = fast.parse(line), careful_ok = careful.parse(line);
    if (fast_ok != careful_ok) __builtin_trap();
    if (!fast_ok) {
      if (fast.error() != careful.error()) __builtin_trap();
      break;
    }
    pos = end + 1;
  }
  if (fast_events.events.size() != careful_events.events.size()) __builtin_trap();
  for (size_t i = 0; i < fast_events.events.size(); ++i) {
    if (!same(fast_events.events[i], careful_events.events[i])) __builtin_trap();
  }
}

// Parsing ahead on helper threads, in chunks small enough that lines cross them, must give the
// sink the same calls and end with the same error as reading on one thread.
void compare_one_thread_and_parse_ahead(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto read_at = [&text](char* out, size_t n, uint64_t at, std::string&) -> ptrdiff_t {
    if (at >= text.size()) return 0;
    n = std::min<size_t>(n, text.size() - at);
    std::memcpy(out, text.data() + at, n);
    return static_cast<ptrdiff_t>(n);
  };
  const auto message = [](const std::optional<capguard::trace::ReadError>& e) {
    return e ? e->to_string() : std::string();
  };
  TouchingSink one, ahead;
  const auto one_error =
      capguard::trace::read_loop::read_lines_ahead("fuzz", read_at, size, 0, one);
  const auto ahead_error =
      capguard::trace::read_loop::read_lines_ahead("fuzz", read_at, size, 2, ahead, 61);
  if (message(one_error) != message(ahead_error) || one.sum != ahead.sum) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  TouchingSink sink;
  const auto error = capguard::trace::read_trace(in, "fuzz", sink);
  if (error) {
    // Every error names what went wrong; line 0 only for errors not about a line.
    if (error->message.empty()) __builtin_trap();
    if (error->to_string().find('\n') != std::string::npos) __builtin_trap();
  }
  compare_fast_and_careful_paths(data, size);
  compare_one_thread_and_parse_ahead(data, size);
  return 0;
}
