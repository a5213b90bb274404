#include "report/text_wrap.h"

#include <vector>

namespace capguard {
namespace {

// Byte length of the ANSI color sequence at line[i] ("\033[1;31m"), 0 when there is none.
size_t escape_length(std::string_view line, size_t i) {
  if (line[i] != '\033' || i + 1 >= line.size() || line[i + 1] != '[') return 0;
  size_t end = i + 2;
  while (end < line.size() && line[end] != 'm') ++end;
  return end < line.size() ? end - i + 1 : 0;
}

bool is_frame_line(std::string_view line) {
  const size_t at = line.find_first_not_of(' ');
  if (at == std::string_view::npos) return false;
  // Possibly bold: the escape comes before the '#'.
  size_t i = at + escape_length(line, at);
  return i + 1 < line.size() && line[i] == '#' && line[i + 1] >= '0' && line[i + 1] <= '9';
}

// How far a continuation of `line` is indented: under the text after "fix: ", else two
// spaces past the line's own indentation.
std::string continuation_indent(std::string_view line) {
  const size_t at = std::min(line.find_first_not_of(' '), line.size());
  return std::string(at + (line.substr(at).starts_with("fix: ") ? 5 : 2), ' ');
}

void wrap_line(std::string& out, std::string_view line, size_t width) {
  const std::string indent = continuation_indent(line);
  const size_t body = line.find_first_not_of(' ');
  bool first = true;
  while (true) {
    const std::string_view lead = first ? std::string_view() : std::string_view(indent);
    // The byte where the line passes `width` columns, and the last space before it.
    size_t columns = lead.size(), i = 0, last_space = std::string_view::npos;
    for (; i < line.size(); ++i) {
      if (const size_t esc = escape_length(line, i); esc > 0) {
        i += esc - 1;
        continue;
      }
      if ((static_cast<unsigned char>(line[i]) & 0xc0) == 0x80) continue;  // inside a code point
      if (columns == width) break;
      if (line[i] == ' ' && (!first || i > body)) last_space = i;
      ++columns;
    }
    if (i >= line.size()) {
      out.append(lead).append(line);
      return;
    }
    size_t cut = last_space;
    if (cut == std::string_view::npos) {  // one long word: whole, up to the next space
      cut = line.find(' ', i);
      if (cut == std::string_view::npos) {
        out.append(lead).append(line);
        return;
      }
    }
    out.append(lead).append(line.substr(0, cut)).push_back('\n');
    line = line.substr(cut + 1);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (line.empty()) return;
    first = false;
  }
}

// "==42==capguard: ...": a process's notice (not attached, stopped watching).
bool is_process_notice(std::string_view line) {
  if (!line.starts_with("==")) return false;
  const size_t end = line.find("==", 2);
  return end != std::string_view::npos && end > 2 &&
         line.substr(2, end - 2).find_first_not_of("0123456789") == std::string_view::npos &&
         line.substr(end).starts_with("==capguard: ");
}

}  // namespace

size_t display_width(std::string_view line) {
  size_t columns = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (const size_t esc = escape_length(line, i); esc > 0) {
      i += esc - 1;
      continue;
    }
    columns += (static_cast<unsigned char>(line[i]) & 0xc0) != 0x80;
  }
  return columns;
}

std::string wrap_long_lines(std::string_view text, bool keep_frames, size_t width) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    // The SUMMARY line and a process's notices ("==42==capguard: stopped watching: ...") stay
    // one line whatever their width: scripts grep them.
    if (display_width(line) <= width || (keep_frames && is_frame_line(line)) ||
        line.starts_with("SUMMARY: ") || is_process_notice(line))
      out.append(line);
    else
      wrap_line(out, line, width);
    if (end == std::string_view::npos) break;
    out.push_back('\n');
    text.remove_prefix(end + 1);
  }
  return out;
}

}  // namespace capguard
