#include "report/json_reader.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "util/regular_file.h"

namespace capguard {
namespace {

constexpr int kMaxDepth = 200;  // deeper input is rejected rather than overflowing the stack

class Parser {
 public:
  Parser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  JsonParseResult run() {
    JsonParseResult result;
    skip_space();
    JsonValue v = parse_value(0);
    skip_space();
    if (!error_ && pos_ != text_.size()) fail("unexpected text after the JSON value");
    if (error_) {
      result.error = std::move(error_);
    } else {
      result.value = std::move(v);
    }
    return result;
  }

 private:
  void fail(const std::string& message) {
    if (error_) return;  // keep the first error: it is the one that explains the rest
    JsonError e{source_, 1, 1, message};
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++e.line;
        e.column = 1;
      } else {
        ++e.column;
      }
    }
    error_ = std::move(e);
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      ++pos_;
    }
  }

  bool consume_literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  JsonValue parse_value(int depth) {
    if (depth > kMaxDepth) {
      fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
      return {};
    }
    if (at_end()) {
      fail("unexpected end of input, expected a value");
      return {};
    }
    const char c = peek();
    if (c == '{') return parse_object(depth);
    if (c == '[') return parse_array(depth);
    if (c == '"') return JsonValue(parse_string());
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
    if (consume_literal("true")) return JsonValue(true);
    if (consume_literal("false")) return JsonValue(false);
    if (consume_literal("null")) return JsonValue();
    fail(std::string("unexpected character '") + c + "', expected a value");
    return {};
  }

  JsonValue parse_object(int depth) {
    ++pos_;  // '{'
    JsonValue::Object members;
    constexpr size_t kScanKeys = 16;
    std::unordered_set<std::string> keys;  // only past kScanKeys members
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return JsonValue(std::move(members));
    }
    while (!error_) {
      skip_space();
      if (peek() != '"') {
        fail("expected '\"' to begin an object key");
        break;
      }
      std::string key = parse_string();
      // Refused, not chosen: RFC 8259 leaves the meaning open, Python and jq take
      // the last, this reader took the first, so one report read as failing elsewhere and as
      // passing here. Neither choice is safe when both readers are trusted: a report capguard
      // wrote never repeats a key, so one that does was edited and is damaged.
      // A scan while the object is small (nearly every one); a set past that, so that an
      // object of a million keys is not a trillion comparisons.
      bool repeated = false;
      if (members.size() < kScanKeys) {
        for (const auto& member : members) repeated |= member.first == key;
      } else {
        if (keys.empty())
          for (const auto& member : members) keys.insert(member.first);
        repeated = !keys.insert(key).second;
      }
      if (repeated) {
        fail("the key \"" + key.substr(0, 64) + "\" appears twice in one object");
        break;
      }
      skip_space();
      if (peek() != ':') {
        fail("expected ':' after object key");
        break;
      }
      ++pos_;
      skip_space();
      JsonValue v = parse_value(depth + 1);
      members.emplace_back(std::move(key), std::move(v));
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() == '}') {
        ++pos_;
        break;
      } else {
        fail("expected ',' or '}' in object");
      }
    }
    return JsonValue(std::move(members));
  }

  JsonValue parse_array(int depth) {
    ++pos_;  // '['
    JsonValue::Array items;
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return JsonValue(std::move(items));
    }
    while (!error_) {
      skip_space();
      items.push_back(parse_value(depth + 1));
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() == ']') {
        ++pos_;
        break;
      } else {
        fail("expected ',' or ']' in array");
      }
    }
    return JsonValue(std::move(items));
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  std::optional<uint32_t> parse_hex4() {
    if (pos_ + 4 > text_.size()) return std::nullopt;
    uint32_t v = 0;
    const char* begin = text_.data() + pos_;
    auto [end, ec] = std::from_chars(begin, begin + 4, v, 16);
    if (ec != std::errc() || end != begin + 4) return std::nullopt;
    pos_ += 4;
    return v;
  }

  std::string parse_string() {
    ++pos_;  // '"'
    std::string out;
    while (!error_) {
      if (at_end()) {
        fail("unterminated string");
        break;
      }
      const char c = text_[pos_++];
      if (c == '"') break;
      if (static_cast<unsigned char>(c) < 0x20) {
        --pos_;
        fail("control character in string (must be escaped)");
        break;
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      const char e = peek();
      ++pos_;
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
          parse_unicode_escape(out);
          break;
        default:
          --pos_;
          fail("invalid escape in string");
      }
    }
    return out;
  }

  void parse_unicode_escape(std::string& out) {
    auto cp = parse_hex4();
    if (!cp) return fail("\\u must be followed by 4 hex digits");
    if (*cp >= 0xd800 && *cp <= 0xdbff && consume_literal("\\u")) {
      auto low = parse_hex4();
      if (!low || *low < 0xdc00 || *low > 0xdfff) return fail("invalid UTF-16 surrogate pair");
      *cp = 0x10000 + ((*cp - 0xd800) << 10) + (*low - 0xdc00);
    } else if (*cp >= 0xd800 && *cp <= 0xdfff) {
      *cp = 0xfffd;  // lone surrogate: keep going, as most parsers do
    }
    append_utf8(out, *cp);
  }

  JsonValue parse_number() {
    const size_t start = pos_;
    if (peek() == '-') ++pos_;
    const auto digits = [&] {
      const size_t from = pos_;
      while (!at_end() && peek() >= '0' && peek() <= '9') ++pos_;
      return pos_ - from;
    };
    const size_t int_start = pos_;
    if (digits() == 0) {
      fail("expected digits in number");
      return {};
    }
    if (text_[int_start] == '0' && pos_ - int_start > 1) {
      pos_ = int_start;
      fail("leading zero in number");
      return {};
    }
    if (peek() == '.') {
      ++pos_;
      if (digits() == 0) return fail("expected digits after '.'"), JsonValue();
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (digits() == 0) return fail("expected digits in exponent"), JsonValue();
    }
    double d = 0;
    const char* begin = text_.data() + start;
    auto [end, ec] = std::from_chars(begin, text_.data() + pos_, d);
    if (ec != std::errc() || end != text_.data() + pos_ || !std::isfinite(d)) {
      fail("number out of range");
      return {};
    }
    return JsonValue(d);
  }

  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
  std::optional<JsonError> error_;
};

}  // namespace

const JsonValue* JsonValue::get(std::string_view key) const {
  const Object* o = as_object();
  if (!o) return nullptr;
  for (const auto& [k, v] : *o) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string JsonValue::get_string(std::string_view key, std::string fallback) const {
  const JsonValue* v = get(key);
  const std::string* s = v ? v->as_string() : nullptr;
  return s ? *s : fallback;
}

std::optional<int64_t> JsonValue::get_int(std::string_view key) const {
  const JsonValue* v = get(key);
  const double* d = v ? v->as_number() : nullptr;
  if (!d || *d != std::floor(*d) || std::fabs(*d) > 9.0e15) return std::nullopt;
  return static_cast<int64_t>(*d);
}

std::string JsonError::to_string() const {
  std::string s = source;
  if (line > 0) s += ":" + std::to_string(line) + ":" + std::to_string(column);
  return s + ": " + message;
}

JsonParseResult parse_json(std::string_view text, const std::string& source_name) {
  return Parser(text, source_name).run();
}

JsonParseResult parse_json_file(const std::string& path) {
  std::string error;
  const std::optional<std::string> text = read_regular_file(path, kMaxJsonFileBytes, error);
  if (!text) return {std::nullopt, JsonError{path, 0, 0, "cannot open file: " + error}};
  return parse_json(*text, path);
}

}  // namespace capguard
