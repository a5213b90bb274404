// UTF-8 validation shared by the renderers that must emit valid text whatever bytes a symbol
// or path contains.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace capguard {

// Length of the valid UTF-8 sequence starting at s[i] (1 for ASCII), or 0 when it is invalid
// (bad lead byte, truncated, overlong, surrogate, beyond U+10FFFF).
inline size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  size_t n = 0;
  uint32_t min = 0;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2, min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3, min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  uint32_t cp = c & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

// The code point of the valid n-byte sequence at s[i] (n from utf8_sequence_length).
inline uint32_t utf8_code_point(std::string_view s, size_t i, size_t n) {
  const auto byte = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(s[k])); };
  if (n == 1) return byte(i);
  uint32_t cp = byte(i) & (0x7fu >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (byte(i + k) & 0x3f);
  return cp;
}

// Code points that reorder or break what a reader sees without being visible themselves: the
// bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), the
// direction marks (U+200E, U+200F, U+061C) and the Unicode line and paragraph separators
// (U+2028, U+2029). Text from a trace with them could show a line other than the one it holds
// ("Trojan Source") or a line break where there is none.
inline bool is_invisible_control(uint32_t cp) {
  return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e ||
         cp == 0x200f || cp == 0x061c || cp == 0x2028 || cp == 0x2029;
}

// `s` made safe to print as one piece of a text line on a terminal: control characters (NUL,
// ESC, newlines, DEL, the C1 range) and invalid UTF-8 bytes become \xNN, and the invisible
// controls above \u{NNNN}, so that text from a trace can neither cut a report short, forge a
// line (a SUMMARY:), reorder what is shown, nor drive the terminal.
inline std::string terminal_safe(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  const auto escape = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  };
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = utf8_sequence_length(s, i);
    const bool c1 = n == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0;
    if (n == 0 || c < 0x20 || c == 0x7f || c1) {
      for (size_t k = 0; k < (c1 ? 2 : 1); ++k) escape(static_cast<unsigned char>(s[i + k]));
      i += c1 ? 2 : 1;
      continue;
    }
    if (n == 3 && is_invisible_control(utf8_code_point(s, i, n))) {
      const uint32_t cp = utf8_code_point(s, i, n);
      out += "\\u{";
      for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xf];
      out += '}';
      i += n;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace capguard
