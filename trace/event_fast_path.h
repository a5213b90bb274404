// Internal to the reader: parses the common shape of an event line ('e' record) without a
// branch per byte. One pass over the line, 16 bytes at a time, finds every field boundary and
// every hex digit; the fields are then parsed independently, so the CPU overlaps them.
//
// It never judges: it either produces exactly what the careful parser (record_parser.cpp)
// would, or returns false and the careful parser decides, errors included. The fuzz target
// checks that the two agree on every line it generates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trace/event.h"
#include "trace/line_scan.h"

namespace capguard::trace {

// An event line ('e' record): the lines the fast path is tried on first.
inline bool is_event_line(std::string_view line) {
  return line.size() > 2 && line[0] == 'e' && line[1] == ' ';
}

// `line` starts with "e " and is followed in memory by '\n' and 16 readable bytes. On success
// `event` holds every value except api, which is returned as a view into the line.
bool parse_event_fast(std::string_view line, ApiEvent& event, std::string_view& api);

namespace event_head {

// The value of n (1..15) lower-case hex digits at p.
[[gnu::always_inline]] inline uint64_t value(const char* p, size_t n) {
  if (n <= 8) return scan::hex_value(scan::load8(p), static_cast<int>(n));
  const int rest = static_cast<int>(n - 8);
  return (scan::hex_value(scan::load8(p), 8) << (4 * rest)) |
         scan::hex_value(scan::load8(p + 8), rest);
}

}  // namespace event_head

// Splits the same line after its first three fields (seq, time, tid: the ones that change from
// one call to the next) and reads them; `tail` is the rest, from the API name on. False when
// any of them is unusual (16+ digits, a tid over 8 digits, the line ends, all three
// longer than 32 bytes): the careful way. Inline: every event line
// comes here first.
[[gnu::always_inline]] inline bool parse_event_head(std::string_view line, uint64_t& seq,
                                                    uint64_t& time_ns, uint32_t& tid,
                                                    std::string_view& tail) {
  // Spaces and hex digits of the 16 bytes after "e ", and of the next 16 when the third space
  // is not among them (then the line goes on past them: its '\n' would be a bad byte).
  const char* const p = line.data() + 2;
  scan::Bytes16 v = scan::load16(p);
  uint32_t spaces = scan::lane_bits(v == ' ');
  uint32_t good = spaces | scan::lane_bits(scan::hex_digit_lanes(v));
  const auto third_space = [&] {
    const uint32_t second = spaces & (spaces - 1);
    return second & (second - 1);
  };
  if (third_space() == 0 && good == 0xffff) {
    v = scan::load16(p + 16);
    const uint32_t more = scan::lane_bits(v == ' ');
    spaces |= more << 16;
    good |= (more | scan::lane_bits(scan::hex_digit_lanes(v))) << 16;
  }
  const uint32_t third = third_space(), second = spaces & (spaces - 1);
  if (third == 0) return false;
  const size_t s1 = __builtin_ctz(spaces), s2 = __builtin_ctz(second), s3 = __builtin_ctz(third);
  const uint32_t before_third = (uint32_t{1} << s3) - 1;  // s3 <= 31
  // Every byte before the third space a digit or a space; fields of 1..15, 1..15, 1..8 digits.
  if ((~good & before_third) != 0 || s1 - 1 > 14 || s2 - s1 - 2 > 14 || s3 - s2 - 2 > 7)
    return false;
  seq = event_head::value(p, s1);
  time_ns = event_head::value(p + s1 + 1, s2 - s1 - 1);
  tid = static_cast<uint32_t>(event_head::value(p + s2 + 1, s3 - s2 - 1));
  tail = std::string_view(p + s3 + 1, line.size() - 2 - s3 - 1);
  return true;
}

}  // namespace capguard::trace
