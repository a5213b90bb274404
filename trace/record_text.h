// The text of the graph and kernel records (graph_record.h, kernel_record.h): a writer into a
// caller's buffer that never allocates (the interposer formats with it), and the reader's field
// splitter and unescaping. Internal to trace/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "trace/graph_record.h"

namespace capguard::trace::record_text {

class Out {
 public:
  Out(char* begin, size_t capacity) : pos_(begin), begin_(begin), end_(begin + capacity) {}
  void put(char c) {
    if (pos_ < end_) *pos_ = c;
    ++pos_;
  }
  void hex(uint64_t v) {
    char digits[16];
    int n = 0;
    do {
      digits[n++] = "0123456789abcdef"[v & 15];
      v >>= 4;
    } while (v != 0);
    while (n > 0) put(digits[--n]);
  }
  void space_hex(uint64_t v) {
    put(' ');
    hex(v);
  }
  void escaped(std::string_view s, size_t max_length = kMaxGraphNameLength) {
    put(' ');
    if (s.size() > max_length) s = s.substr(0, max_length);
    for (char ch : s) {
      const auto c = static_cast<unsigned char>(ch);
      if (c > 0x20 && c < 0x7f && c != '%') {
        put(static_cast<char>(c));
      } else {
        put('%');
        put("0123456789ABCDEF"[c >> 4]);
        put("0123456789ABCDEF"[c & 15]);
      }
    }
  }
  size_t finish() {
    put('\n');
    return pos_ <= end_ ? static_cast<size_t>(pos_ - begin_) : 0;
  }

 private:
  char* pos_;
  char* begin_;
  char* end_;
};

// Splits on single spaces; an empty field is allowed (an empty escaped string).
class Fields {
 public:
  explicit Fields(std::string_view line) : rest_(line.substr(line.size() > 1 ? 2 : 1)) {
    done_ = line.size() < 2;
  }
  bool next(std::string_view& field) {
    if (done_) return false;
    const size_t space = rest_.find(' ');
    field = rest_.substr(0, space);
    if (space == std::string_view::npos) {
      done_ = true;
    } else {
      rest_ = rest_.substr(space + 1);
    }
    return true;
  }
  template <class T>
  bool hex(T& out) {
    std::string_view f;
    if (!next(f) || f.empty() || f.size() > 16) return false;
    uint64_t v = 0;
    for (char c : f) {
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return false;
      v = v << 4 | static_cast<uint64_t>(d);
    }
    if (v > static_cast<uint64_t>(static_cast<T>(~T{}))) return false;
    out = static_cast<T>(v);
    return true;
  }
  bool at_end() const { return done_; }

 private:
  std::string_view rest_;
  bool done_ = false;
};

inline bool unescape(std::string_view in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    const auto c = static_cast<unsigned char>(in[i]);
    if (c <= 0x20 || c >= 0x7f) return false;
    if (c != '%') {
      out += static_cast<char>(c);
      continue;
    }
    if (i + 2 >= in.size()) return false;
    int v = 0;
    for (int k = 1; k <= 2; ++k) {
      const char h = in[i + k];
      const int d = h >= '0' && h <= '9'   ? h - '0'
                    : h >= 'A' && h <= 'F' ? h - 'A' + 10
                    : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                           : -1;
      if (d < 0) return false;
      v = v * 16 + d;
    }
    out += static_cast<char>(v);
    i += 2;
  }
  return true;
}

}  // namespace capguard::trace::record_text
