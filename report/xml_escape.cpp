#include "report/xml_escape.h"

#include "report/utf8.h"

namespace capguard {

std::string xml_escape(std::string_view s, bool attribute) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence_length(s, i);
    const char c = s[i];
    // Not XML 1.0 Chars: invalid UTF-8 (lone surrogates included), C0 controls but tab,
    // newline and carriage return, and the non-characters U+FFFE and U+FFFF; also DEL and
    // the C1 controls, which XML 1.0 discourages (and 1.1 treats U+0085 as a line end).
    const uint32_t cp = n == 0 ? 0 : utf8_code_point(s, i, n);
    const bool non_character = (n == 3 && cp >= 0xfffe) || (cp >= 0x7f && cp < 0xa0);
    if (n == 0 || non_character ||
        (n == 1 && static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')) {
      out += "\xEF\xBF\xBD";
      i += n == 0 ? 1 : n;
      continue;
    }
    if (n == 3 && is_invisible_control(utf8_code_point(s, i, n))) {  // shown, not obeyed
      out += terminal_safe(s.substr(i, n));
      i += n;
      continue;
    }
    if (!attribute && (c == '\n' || c == '\t')) {
      out += c;
      ++i;
      continue;
    }
    switch (n == 1 ? c : '\0') {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\r':
        out += "&#13;";
        break;
      case '\t':
        out += "&#9;";
        break;
      default:
        out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace capguard
