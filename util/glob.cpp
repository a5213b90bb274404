#include "util/glob.h"

#include "util/base_name.h"

namespace capguard {

bool glob_match(std::string_view pattern, std::string_view text) {
  // Greedy matching with one backtrack point (the last '*'): linear for ordinary patterns and
  // never exponential.
  size_t p = 0, t = 0;
  size_t star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p, ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_text = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++star_text;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool path_matches(std::string_view glob, std::string_view path) {
  if (path.empty()) return false;
  if (glob.find('/') == std::string_view::npos) return glob_match(glob, base_name(path));
  return glob_match(glob, path);
}

}  // namespace capguard
