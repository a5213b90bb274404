// The JSON report: design.md's stable machine interface. Written by hand (no dependency),
// deterministic (fields and elements in a fixed order, so golden files can diff it), always
// valid UTF-8 (bytes that are not are replaced by U+FFFD).
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/render.h"
#include "trace/format.h"

namespace capguard {
namespace {

// Length of the valid UTF-8 sequence at the start of `s`, or 0 when it is not one.
size_t utf8_sequence_length(std::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(0);
  size_t length = 0;
  uint32_t min = 0;
  if (lead < 0x80) return 1;
  if ((lead & 0xe0) == 0xc0)
    length = 2, min = 0x80;
  else if ((lead & 0xf0) == 0xe0)
    length = 3, min = 0x800;
  else if ((lead & 0xf8) == 0xf0)
    length = 4, min = 0x10000;
  else
    return 0;
  if (s.size() < length) return 0;
  uint32_t code = lead & (0x7f >> length);
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    code = (code << 6) | (byte(i) & 0x3f);
  }
  if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
  return length;
}

class JsonWriter {
 public:
  std::string take() { return std::move(out_); }

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }
  void key(std::string_view name) {
    separate();
    string(name);
    out_ += ": ";
    after_key_ = true;
  }
  void value(std::string_view text) { separate(), string(text); }
  void value(const char* text) { value(std::string_view(text)); }
  void value(uint64_t n) { separate(), out_ += std::to_string(n); }
  void value(bool b) { separate(), out_ += b ? "true" : "false"; }
  void null() { separate(), out_ += "null"; }

 private:
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!first_.empty()) {
      if (!first_.back()) out_ += ',';
      first_.back() = false;
      newline();
    }
  }
  void open(char bracket) {
    separate();
    out_ += bracket;
    first_.push_back(true);
  }
  void close(char bracket) {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) newline();
    out_ += bracket;
  }
  void newline() {
    out_ += '\n';
    out_.append(2 * first_.size(), ' ');
  }
  void string(std::string_view text) {
    out_ += '"';
    while (!text.empty()) {
      const char c = text[0];
      const size_t length = utf8_sequence_length(text);
      if (length == 0) {
        out_ += "\\ufffd";
        text.remove_prefix(1);
        continue;
      }
      if (c == '"')
        out_ += "\\\"";
      else if (c == '\\')
        out_ += "\\\\";
      else if (c == '\n')
        out_ += "\\n";
      else if (c == '\t')
        out_ += "\\t";
      else if (c == '\r')
        out_ += "\\r";
      else if (static_cast<unsigned char>(c) < 0x20)
        out_ += fmt::format("\\u{:04x}", c);
      else
        out_.append(text.substr(0, length));
      text.remove_prefix(length);
    }
    out_ += '"';
  }

  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

void write_location(JsonWriter& json, const Location& location) {
  json.begin_object();
  json.key("frames");
  json.begin_array();
  for (const auto& frame : location.frames) {
    json.begin_object();
    json.key("function");
    frame.function.empty() ? json.null() : json.value(frame.function);
    json.key("file");
    frame.file.empty() ? json.null() : json.value(frame.file);
    json.key("line");
    frame.line > 0 ? json.value(static_cast<uint64_t>(frame.line)) : json.null();
    json.key("module");
    frame.module.empty() ? json.null() : json.value(frame.module);
    json.end_object();
  }
  json.end_array();
  json.key("user_frame");
  location.user_frame >= 0 ? json.value(static_cast<uint64_t>(location.user_frame)) : json.null();
  json.end_object();
}

void write_process(JsonWriter& json, const ProcessInfo& process) {
  json.begin_object();
  json.key("pid"), json.value(uint64_t{process.pid});
  json.key("command"), json.value(process.command);
  json.key("attached"), json.value(process.attached);
  json.end_object();
}

void write_capture(JsonWriter& json, const CaptureInfo& capture) {
  json.begin_object();
  json.key("id"), json.value(uint64_t{capture.id});
  json.key("pid"), json.value(uint64_t{capture.pid});
  json.key("thread"), json.value(uint64_t{capture.thread});
  json.key("stream"), json.value(fmt::format("0x{:x}", capture.stream));
  json.key("mode"), json.value(capture.mode);
  json.key("status"), json.value(to_string(capture.status));
  json.key("nodes");
  capture.nodes ? json.value(*capture.nodes) : json.null();
  json.key("begin"), write_location(json, capture.begin);
  json.key("end");
  capture.end ? write_location(json, *capture.end) : json.null();
  json.key("root_cause");
  capture.root_cause ? json.value(uint64_t{*capture.root_cause}) : json.null();
  json.end_object();
}

void write_finding(JsonWriter& json, const Finding& finding) {
  json.begin_object();
  json.key("rule"), json.value(finding.rule);
  json.key("severity"), json.value(to_string(finding.severity));
  json.key("message"), json.value(finding.message);
  json.key("api"), json.value(finding.api);
  json.key("result");
  finding.result_name.empty() ? json.null() : json.value(finding.result_name);
  json.key("pid"), json.value(uint64_t{finding.pid});
  json.key("thread"), json.value(uint64_t{finding.thread});
  json.key("capturing_thread"), json.value(finding.capturing_thread);
  json.key("capture");
  finding.capture ? json.value(uint64_t{*finding.capture}) : json.null();
  json.key("location"), write_location(json, finding.location);
  json.key("related");
  json.begin_array();
  for (const auto& related : finding.related) {
    json.begin_object();
    json.key("role"), json.value(related.role);
    json.key("location"), write_location(json, related.location);
    json.end_object();
  }
  json.end_array();
  json.key("consequences"), json.value(uint64_t{finding.consequences});
  json.end_object();
}

}  // namespace

std::string render_json(const Report& report) {
  JsonWriter json;
  json.begin_object();
  json.key("tool"), json.value("capguard");
  json.key("version"), json.value(trace::kToolVersion);
  json.key("processes");
  json.begin_array();
  for (const auto& process : report.processes) write_process(json, process);
  json.end_array();
  json.key("captures");
  json.begin_array();
  for (const auto& capture : report.captures) write_capture(json, capture);
  json.end_array();
  json.key("findings");
  json.begin_array();
  for (const auto& finding : report.findings) write_finding(json, finding);
  json.end_array();
  json.key("summary");
  json.begin_object();
  json.key("errors"), json.value(uint64_t(report.count(Severity::Error)));
  json.key("warnings"), json.value(uint64_t(report.count(Severity::Warning)));
  json.key("notes"), json.value(uint64_t(report.count(Severity::Note)));
  json.end_object();
  json.end_object();
  std::string out = json.take();
  out += '\n';
  return out;
}

}  // namespace capguard
