// Internal to the reader: word-at-a-time scanning of trace fields (SWAR), so that a typical
// event line costs a few dozen nanoseconds rather than one branch per byte.
//
// The caller guarantees that 16 bytes past any position it passes are readable, and that the
// line is followed by a byte that ends every field ('\n'), so loads may run past the field
// without reading outside the buffer and without the junk changing the result.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace capguard::trace::scan {

static_assert(std::endian::native == std::endian::little, "loads take p[0] as the lowest byte");

inline constexpr uint64_t kOnes = 0x0101010101010101ull;
inline constexpr uint64_t kHighs = 0x8080808080808080ull;

[[gnu::always_inline]] inline uint64_t load8(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;  // little-endian: p[0] is the lowest byte
}

// Bit 7 of each byte is set where lo <= byte <= hi (lo, hi < 0x80; bytes >= 0x80 never match).
[[gnu::always_inline]] inline uint64_t bytes_in_range(uint64_t w, uint8_t lo, uint8_t hi) {
  const uint64_t low7 = w & ~kHighs;
  const uint64_t at_least_lo = low7 + kOnes * (0x80 - lo);
  const uint64_t at_most_hi = kOnes * (0x80 + hi) - low7;  // no byte borrows: 0x80 + hi > low7
  return at_least_lo & at_most_hi & ~w & kHighs;
}

// Number of leading bytes of w (in memory order) whose bit 7 is set in `mask`.
[[gnu::always_inline]] inline int leading_matches(uint64_t mask) {
  const uint64_t misses = ~mask & kHighs;
  return misses == 0 ? 8 : __builtin_ctzll(misses) / 8;
}

// The value of the first n (1..8) lower-case hex digits of w.
[[gnu::always_inline]] inline uint64_t hex_value(uint64_t w, int n) {
  // '0'..'9' keep their low nibble; 'a'..'f' (bit 6 set) have 1..6 there and get 9 added.
  uint64_t nibbles = (w & (kOnes * 0x0f)) + ((w >> 6) & kOnes) * 9;
  nibbles = __builtin_bswap64(nibbles) >> (8 * (8 - n));  // first digit most significant
  nibbles = (nibbles | (nibbles >> 4)) & 0x00ff00ff00ff00ffull;
  nibbles = (nibbles | (nibbles >> 8)) & 0x0000ffff0000ffffull;
  return (nibbles | (nibbles >> 16)) & 0x00000000ffffffffull;
}

[[gnu::always_inline]] inline uint64_t hex_digits(uint64_t w) {
  return bytes_in_range(w, '0', '9') | bytes_in_range(w, 'a', 'f');
}

// Parses up to 16 lower-case hex digits at p. Returns how many there were (0..16); when 16,
// more may follow and the caller must fall back to a careful loop.
inline int hex_prefix(const char* p, uint64_t& value) {
  const uint64_t first = load8(p);
  const int n = leading_matches(hex_digits(first));
  if (n == 0) return 0;
  value = hex_value(first, n);
  if (n < 8) return n;
  const uint64_t second = load8(p + 8);
  const int m = leading_matches(hex_digits(second));
  if (m == 0) return 8;
  value = (value << (4 * m)) | hex_value(second, m);
  return 8 + m;
}

// Length of the run of bytes in 0x21..0x7e starting at p (stops at a space, the '\n' after
// the line, or any other byte outside the range).
inline size_t printable_run(const char* p) {
  size_t n = 0;
  for (;;) {
    const int k = leading_matches(bytes_in_range(load8(p + n), 0x21, 0x7e));
    n += static_cast<size_t>(k);
    if (k < 8) return n;
  }
}

// 16 bytes at a time, in the compiler's portable vector type (SSE2 on x86-64, NEON on aarch64):
// classifying a whole line this way costs a few instructions per 16 bytes, where the words
// above need their 64-bit constants built again for every field.
using Bytes16 = uint8_t __attribute__((vector_size(16)));

[[gnu::always_inline]] inline Bytes16 load16(const char* p) {
  Bytes16 v;
  std::memcpy(&v, p, 16);
  return v;
}

// Bit i set where lane i of a comparison's result (0 or all ones per byte) is set.
template <class Lanes>
[[gnu::always_inline]] inline uint32_t lane_bits(Lanes lanes) {
  static_assert(sizeof(Lanes) == 16);
#if defined(__SSE2__)
  return static_cast<uint32_t>(_mm_movemask_epi8(reinterpret_cast<__m128i>(lanes)));
#else
  uint64_t half[2];
  std::memcpy(half, &lanes, 16);
  // Multiplying gathers bit 7 of byte j into bit 56 + j, without carries between them.
  constexpr uint64_t kGather = 0x0002040810204081ull;
  return static_cast<uint32_t>(((half[0] & kHighs) * kGather) >> 56 |
                               (((half[1] & kHighs) * kGather) >> 56) << 8);
#endif
}

// Lanes of lower-case hex digits.
[[gnu::always_inline]] inline auto hex_digit_lanes(Bytes16 v) {
  return (v - '0' <= 9) | (v - 'a' <= 5);  // unsigned: bytes below '0' or 'a' wrap high
}

// Bit i set where p[i] is '\n', for i < 64 and i < size (size >= 1). Reads 64 bytes at p,
// whatever `size`: the reader's buffer has that much room past its end (read_loop.h). A read
// buffer is cut into lines by the set bits, 64 bytes at a time, where memchr() per line cost
// a call and its branches on every line.
[[gnu::always_inline]] inline uint64_t newline_bits(const char* p, size_t size) {
  uint64_t bits = 0;
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) bits |= uint64_t{lane_bits(load16(p + 16 * i) == '\n')} << (16 * i);
  return size < 64 ? bits & ((uint64_t{1} << size) - 1) : bits;
}

// The '\n's of [from, end) of a buffer, in order, by newline_bits() (so 64 bytes must be
// readable past `end`).
class Newlines {
 public:
  Newlines(const char* buf, size_t from, size_t end)
      : buf_(buf),
        block_(from),
        end_(end),
        bits_(from < end ? newline_bits(buf + from, end - from) : 0) {}
  // The next '\n''s offset in the buffer, into `at`; false when there is none.
  [[gnu::always_inline]] bool next(size_t& at) {
    while (bits_ == 0) {
      block_ += 64;
      if (block_ >= end_) return false;
      bits_ = newline_bits(buf_ + block_, end_ - block_);
    }
    at = block_ + static_cast<size_t>(__builtin_ctzll(bits_));
    bits_ &= bits_ - 1;
    return true;
  }

 private:
  const char* buf_;
  size_t block_, end_;
  uint64_t bits_;
};

}  // namespace capguard::trace::scan
