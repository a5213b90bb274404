// Shell-style globs ('*' any run of characters, '?' one character), as suppressions,
// --user-code and --rehearse write them. glob_match is header-only and allocates nothing, so
// that the interposer's NVTX callbacks (interposer/nvtx_ranges.cpp) match with it too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace capguard {

namespace glob_detail {

inline bool char_matches(char pattern, char text) { return pattern == '?' || pattern == text; }

// Whether `segment` (no '*') matches `text` at `at` (the caller checked that it fits).
inline bool segment_at(std::string_view segment, std::string_view text, size_t at) {
  for (size_t i = 0; i < segment.size(); ++i)
    if (!char_matches(segment[i], text[at + i])) return false;
  return true;
}

// Pieces up to this long are found by a bit-parallel scan (Shift-And), linear in the text;
// up to kShort bytes by trying each place (at most kShort steps a place).
inline constexpr size_t kWords = 4;
inline constexpr size_t kBitParallel = 64 * kWords;
inline constexpr size_t kShort = 8;

// One past the end of the leftmost match of `segment` (no '*', not empty) in text[from, end),
// or npos. Shift-And: bit i of the state says whether segment[0..i] matches the text just read;
// each distinct character of the segment has a mask of the positions that accept it (on the
// stack, only those characters' masks are filled: a long text, not a long segment, is the
// common case).
inline size_t find_segment(std::string_view segment, std::string_view text, size_t from,
                           size_t end) {
  if (segment.size() <= kShort || segment.size() > kBitParallel) {
    // Short, or a user's own very long glob (never one from a trace: those are cut at 256).
    for (size_t at = from; at + segment.size() <= end; ++at)
      if (segment_at(segment, text, at)) return at + segment.size();
    return std::string_view::npos;
  }
  const size_t words = (segment.size() + 63) / 64;
  uint8_t slot[256] = {};                // a character's mask: 0 none, else masks[slot - 1]
  uint64_t masks[kBitParallel][kWords];  // only the first `used` rows are filled
  size_t used = 0;
  uint64_t any[kWords] = {};  // '?' positions
  for (size_t i = 0; i < segment.size(); ++i) {
    const uint64_t bit = uint64_t{1} << (i % 64);
    if (segment[i] == '?') {
      any[i / 64] |= bit;
      continue;
    }
    uint8_t& s = slot[static_cast<unsigned char>(segment[i])];
    if (s == 0) {
      for (size_t w = 0; w < kWords; ++w) masks[used][w] = 0;
      s = static_cast<uint8_t>(++used);
    }
    masks[s - 1][i / 64] |= bit;
  }
  static constexpr uint64_t kNone[kWords] = {};
  const size_t last = segment.size() - 1;
  uint64_t state[kWords] = {};
  for (size_t t = from; t < end; ++t) {
    const uint8_t s = slot[static_cast<unsigned char>(text[t])];
    const uint64_t* accept = s == 0 ? kNone : masks[s - 1];
    uint64_t carry = 1;
    for (size_t w = 0; w < words; ++w) {
      const uint64_t next_carry = state[w] >> 63;
      state[w] = ((state[w] << 1) | carry) & (accept[w] | any[w]);
      carry = next_carry;
    }
    if ((state[last / 64] >> (last % 64)) & 1) return t + 1;
  }
  return std::string_view::npos;
}

}  // namespace glob_detail

// Linear in the text for any pattern whose pieces between '*'s are at most 256 bytes
// (the backtracking matcher took O(text x pattern), crafted globs from traces over a minute):
// the piece before the first '*' must begin the text, the piece after the last must end it, and
// each piece between is taken at its leftmost match after the one before (leftmost is never
// worse: a later piece has more text left to match in).
inline bool glob_match(std::string_view pattern, std::string_view text) {
  using glob_detail::segment_at;
  const size_t first_star = pattern.find('*');
  if (first_star == std::string_view::npos)
    return pattern.size() == text.size() && segment_at(pattern, text, 0);
  const std::string_view head = pattern.substr(0, first_star);
  const size_t last_star = pattern.rfind('*');
  const std::string_view tail = pattern.substr(last_star + 1);
  if (head.size() + tail.size() > text.size() || !segment_at(head, text, 0) ||
      !segment_at(tail, text, text.size() - tail.size()))
    return false;
  size_t at = head.size();
  const size_t end = text.size() - tail.size();
  for (size_t p = first_star + 1; p < last_star;) {
    const size_t star = pattern.find('*', p);
    const std::string_view piece = pattern.substr(p, star - p);
    p = star + 1;
    if (piece.empty()) continue;
    at = glob_detail::find_segment(piece, text, at, end);
    if (at == std::string_view::npos) return false;
  }
  return true;
}

// A glob with no '/' matches a path's last component ("libnccl.so*"), one with a '/' the whole
// path ("*/site-packages/*"); an empty path matches nothing.
bool path_matches(std::string_view glob, std::string_view path);

}  // namespace capguard
