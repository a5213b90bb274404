#include "util/glob.h"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

namespace capguard {
namespace {

// The definition, by dynamic programming: whether pattern[0..p) matches text[0..t).
bool reference_match(const std::string& pattern, const std::string& text) {
  std::vector<std::vector<bool>> m(pattern.size() + 1, std::vector<bool>(text.size() + 1));
  m[0][0] = true;
  for (size_t p = 1; p <= pattern.size(); ++p)
    for (size_t t = 0; t <= text.size(); ++t) {
      const char c = pattern[p - 1];
      if (c == '*')
        m[p][t] = m[p - 1][t] || (t > 0 && m[p][t - 1]);
      else
        m[p][t] = t > 0 && m[p - 1][t - 1] && (c == '?' || c == text[t - 1]);
    }
  return m[pattern.size()][text.size()];
}

TEST_CASE("glob_match agrees with the definition on random patterns and texts") {
  std::mt19937 random(35);
  const std::string pattern_chars = "ab?*", text_chars = "ab";
  for (int round = 0; round < 20000; ++round) {
    std::string pattern, text;
    for (size_t n = random() % 9; n > 0; --n) pattern += pattern_chars[random() % 4];
    for (size_t n = random() % 12; n > 0; --n) text += text_chars[random() % 2];
    INFO(pattern, " ", text);
    CHECK(glob_match(pattern, text) == reference_match(pattern, text));
  }
}

TEST_CASE("glob_match finds long pieces (past one and past four words) between stars") {
  const std::string piece(100, 'x'), long_piece(300, 'y');
  CHECK(glob_match("*" + piece + "*", "ab" + piece + "cd"));
  CHECK_FALSE(glob_match("*" + piece + "*", "ab" + piece.substr(1) + "cd"));
  CHECK(glob_match("*a*" + long_piece + "*z", "_a_" + long_piece + "_z"));
  CHECK_FALSE(glob_match("*a*" + long_piece + "*z", "_a_" + long_piece.substr(1) + "_z"));
  std::string with_any = piece;
  with_any[64] = '?';
  CHECK(glob_match("*" + with_any + "*", "ab" + piece + "cd"));
}

TEST_CASE("crafted globs against long texts take linear time") {
  // Backtracking took text x pattern steps here, for each of them.
  const std::string text(1 << 20, 'a');
  std::string pattern = "*";
  for (int i = 0; i < 60; ++i) pattern += "a*";
  pattern += std::string(200, 'a') + "b*";
  for (int i = 0; i < 5; ++i) CHECK_FALSE(glob_match(pattern, text));
}

}  // namespace
}  // namespace capguard
