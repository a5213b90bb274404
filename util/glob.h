// Shell-style globs ('*' any run of characters, '?' one character), as suppressions,
// --user-code and --rehearse write them. glob_match is header-only and allocates nothing, so
// that the interposer's NVTX callbacks (interposer/nvtx_ranges.cpp) match with it too.
#pragma once

#include <cstddef>
#include <string_view>

namespace capguard {

inline bool glob_match(std::string_view pattern, std::string_view text) {
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

// A glob with no '/' matches a path's last component ("libnccl.so*"), one with a '/' the whole
// path ("*/site-packages/*"); an empty path matches nothing.
bool path_matches(std::string_view glob, std::string_view path);

}  // namespace capguard
