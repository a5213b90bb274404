#include "report/xml_escape.h"

#include "report/utf8.h"

namespace capguard {

std::string xml_escape(std::string_view s, bool attribute) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence_length(s, i);
    const char c = s[i];
    if (n == 0 ||
        (n == 1 && static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')) {
      out += "\xEF\xBF\xBD";
      ++i;
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
