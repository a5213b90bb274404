#include "report/json_writer.h"

#include "report/utf8.h"

namespace capguard {

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t n = utf8_sequence_length(s, i);
      if (n == 0) {
        out += "\\ufffd";
        ++i;
      } else if (n == 3 && is_invisible_control(utf8_code_point(s, i, n))) {
        // The same string once parsed; the file itself shows no reordered or broken line
        // (and U+2028/2029 stay out of JavaScript string literals).
        const uint32_t cp = utf8_code_point(s, i, n);
        out += "\\u";
        for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xf];
        i += n;
      } else {
        out.append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xf];
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
}

void JsonWriter::hand_over(bool all) {
  constexpr size_t kChunk = 64 * 1024;
  if (!sink_ || (!all && out_.size() < kChunk)) return;
  sink_(out_);
  out_.clear();
}

void JsonWriter::newline() {
  out_ += '\n';
  out_.append(2 * stack_.size(), ' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!stack_.empty()) {
    if (!stack_.back().empty) out_ += ',';
    stack_.back().empty = false;
    newline();
  }
}

JsonWriter& JsonWriter::raw(std::string_view token) {
  before_value();
  out_ += token;
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (!stack_.back().empty) out_ += ',';
  stack_.back().empty = false;
  newline();
  append_json_string(out_, name);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value();
  append_json_string(out_, s);
  return *this;
}

JsonWriter& JsonWriter::fixed(uint64_t scaled, unsigned places) {
  std::string digits = std::to_string(scaled);
  if (places == 0) return raw(digits);
  if (digits.size() <= places) digits.insert(0, places + 1 - digits.size(), '0');
  digits.insert(digits.size() - places, 1, '.');
  return raw(digits);
}

JsonWriter& JsonWriter::value(bool b) { return raw(b ? "true" : "false"); }

JsonWriter& JsonWriter::begin_object() {
  raw("{");
  stack_.push_back({true});
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  raw("[");
  stack_.push_back({false});
  return *this;
}

JsonWriter& JsonWriter::close(char bracket) {
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline();
  out_ += bracket;
  if (stack_.empty() && bracket == '}') out_ += '\n';  // the document ends
  hand_over(stack_.empty());
  return *this;
}

JsonWriter& JsonWriter::end_object() { return close('}'); }
JsonWriter& JsonWriter::end_array() { return close(']'); }

}  // namespace capguard
