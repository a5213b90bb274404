#include "trace/event_fast_path.h"

#include <cstdint>
#include <cstring>

#include "trace/event_fields.h"
#include "trace/line_scan.h"

namespace capguard::trace {
namespace {

using scan::load8;

constexpr size_t kFastMaxLine = 512;  // longer lines go the careful way
constexpr int kFastMaxFields = 40;

// What one pass over a line found, 16 bytes at a time: bounds[i] is the space before field i
// (bounds[fields] is the line's end), and bit j of hex_bits says whether byte j is a
// lower-case hex digit.
struct LineMap {
  uint16_t bounds[kFastMaxFields + 1];
  int fields = 0;
  uint16_t hex_bits[kFastMaxLine / 16 + 2];  // two spare words, zero: all_hex() reads ahead

  // False when the line has more fields than the fast path takes.
  bool build(const char* p, size_t length) {
    const size_t blocks = (length + 15) / 16;  // the last one reads into the padding
    for (size_t b = 0; b < blocks; ++b) {
      const scan::Bytes16 v = scan::load16(p + 16 * b);
      uint32_t spaces = scan::lane_bits(v == ' ');
      hex_bits[b] = static_cast<uint16_t>(scan::lane_bits(scan::hex_digit_lanes(v)));
      if (length - 16 * b < 16) spaces &= (uint32_t{1} << (length - 16 * b)) - 1;
      for (; spaces != 0; spaces &= spaces - 1) {
        if (fields == kFastMaxFields) return false;
        bounds[fields++] = static_cast<uint16_t>(16 * b + __builtin_ctz(spaces));
      }
    }
    bounds[fields] = static_cast<uint16_t>(length);
    hex_bits[blocks] = hex_bits[blocks + 1] = 0;
    return true;
  }

  // Whether the n (1..16) bytes from `at` on are all hex digits.
  bool all_hex(size_t at, size_t n) const {
    uint32_t bits;
    std::memcpy(&bits, reinterpret_cast<const char*>(hex_bits) + at / 8, 4);
    const uint32_t want = (uint32_t{1} << n) - 1;
    return ((bits >> (at % 8)) & want) == want;
  }
  size_t start(int i) const { return size_t{bounds[i]} + 1; }
  size_t size(int i) const { return static_cast<size_t>(bounds[i + 1] - bounds[i] - 1); }
};

// The n bytes at p + at, when they are 1..16 lower-case hex digits.
[[gnu::always_inline]] inline bool hex_field(const char* p, const LineMap& map, size_t at, size_t n,
                                             uint64_t& value) {
  if (n - 1 >= 16 || !map.all_hex(at, n)) return false;
  const uint64_t first = load8(p + at);
  if (n <= 8) {
    value = scan::hex_value(first, static_cast<int>(n));
    return true;
  }
  const int rest = static_cast<int>(n - 8);
  value = (scan::hex_value(first, 8) << (4 * rest)) | scan::hex_value(load8(p + at + 8), rest);
  return true;
}

[[gnu::always_inline]] inline bool hex_field32(const char* p, const LineMap& map, int i,
                                               uint32_t& value) {
  uint64_t v = 0;
  const size_t n = map.size(i);  // 9+ digits: leading zeros, the careful path's business
  if (n > 8 || !hex_field(p, map, map.start(i), n, v)) return false;
  value = static_cast<uint32_t>(v);
  return true;
}

inline bool is_lower(char c) { return c >= 'a' && c <= 'z'; }

}  // namespace

bool parse_event_fast(std::string_view line, ApiEvent& e, std::string_view& api) {
  const size_t length = line.size();
  if (length > kFastMaxLine) return false;
  const char* const p = line.data();
  LineMap map;
  if (!map.build(p, length)) return false;
  const int fields = map.fields;
  if (fields < 6 || map.bounds[0] != 1) return false;

  uint32_t result = 0;
  if (!hex_field(p, map, map.start(0), map.size(0), e.seq) ||
      !hex_field(p, map, map.start(1), map.size(1), e.time_ns) || !hex_field32(p, map, 2, e.tid) ||
      !hex_field32(p, map, 4, result) || !hex_field32(p, map, 5, e.stack)) {
    return false;
  }
  e.result = static_cast<int32_t>(result);
  const size_t api_size = map.size(3);
  const char* const api_start = p + map.start(3);
  if (api_size == 0 || api_size > kMaxApiNameLength || scan::printable_run(api_start) != api_size) {
    return false;
  }
  api = std::string_view(api_start, api_size);

  for (int i = 6; i < fields; ++i) {
    const size_t at = map.start(i);
    const size_t n = map.size(i);
    const char* s = p + at;
    if (n < 4 || s[2] != '=' || !is_lower(s[0]) || !is_lower(s[1])) return false;
    const int index = event_fields::index_of(s[0], s[1]);
    if (index < 0) continue;  // a newer writer's field: ignored
    uint64_t value = 0;
    const uint32_t bit = 1u << index;
    if ((e.fields & bit) != 0 || !hex_field(p, map, at + 3, n - 3, value) ||
        value > event_fields::kMax[index]) {
      return false;
    }
    event_fields::assign(e, index, value);
    e.fields |= bit;
  }
  return true;
}

}  // namespace capguard::trace
