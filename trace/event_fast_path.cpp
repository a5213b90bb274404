#include "trace/event_fast_path.h"

#include <cstdint>

#include "trace/event_fields.h"
#include "trace/line_scan.h"

namespace capguard::trace {
namespace {

using scan::load8;

constexpr size_t kFastMaxLine = 512;  // longer lines go the careful way
constexpr int kFastMaxFields = 40;

// Bit 7 set in each byte of w that is a space.
inline uint64_t space_bytes(uint64_t w) {
  const uint64_t x = w ^ (scan::kOnes * ' ');
  return ~(((x & ~scan::kHighs) + ~scan::kHighs) | x) & scan::kHighs;
}

// A field of n bytes at s holding 1..16 lower-case hex digits (the byte after a field is a
// space or the line's '\n', never a digit, so the digit count equals n exactly when valid).
[[gnu::always_inline]] inline bool hex_field(const char* s, size_t n, uint64_t& value) {
  if (n - 1 >= 16) return false;
  const uint64_t first = load8(s);
  const int k = scan::leading_matches(scan::hex_digits(first));
  if (n <= 8) {
    if (static_cast<size_t>(k) != n) return false;
    value = scan::hex_value(first, k);
    return true;
  }
  const uint64_t second = load8(s + 8);
  const int m = scan::leading_matches(scan::hex_digits(second));
  if (k != 8 || static_cast<size_t>(m) != n - 8) return false;
  value = (scan::hex_value(first, 8) << (4 * m)) | scan::hex_value(second, m);
  return true;
}

[[gnu::always_inline]] inline bool hex_field32(const char* s, size_t n, uint32_t& value) {
  uint64_t v = 0;
  if (n > 8 || !hex_field(s, n, v)) return false;  // 9+ digits: leading zeros, careful path
  value = static_cast<uint32_t>(v);
  return true;
}

inline bool is_lower(char c) { return c >= 'a' && c <= 'z'; }

}  // namespace

bool parse_event_fast(std::string_view line, ApiEvent& e, std::string_view& api) {
  const size_t length = line.size();
  if (length > kFastMaxLine) return false;
  const char* const p = line.data();

  // bounds[i] is the space before field i; the last entry is the line's end.
  uint16_t bounds[kFastMaxFields + 1];
  int count = 0;
  for (size_t base = 0; base < length; base += 8) {
    uint64_t spaces = space_bytes(load8(p + base));
    if (length - base < 8) spaces &= (uint64_t{1} << (8 * (length - base))) - 1;
    for (; spaces != 0; spaces &= spaces - 1) {
      if (count == kFastMaxFields) return false;
      bounds[count++] = static_cast<uint16_t>(base + __builtin_ctzll(spaces) / 8);
    }
  }
  bounds[count] = static_cast<uint16_t>(length);
  const int fields = count;
  if (fields < 6 || bounds[0] != 1) return false;
  auto start = [&](int i) { return p + bounds[i] + 1; };
  auto size = [&](int i) { return static_cast<size_t>(bounds[i + 1] - bounds[i] - 1); };

  uint32_t result = 0;
  if (!hex_field(start(0), size(0), e.seq) || !hex_field(start(1), size(1), e.time_ns) ||
      !hex_field32(start(2), size(2), e.tid) || !hex_field32(start(4), size(4), result) ||
      !hex_field32(start(5), size(5), e.stack)) {
    return false;
  }
  e.result = static_cast<int32_t>(result);
  const size_t api_size = size(3);
  if (api_size == 0 || api_size > kMaxApiNameLength || scan::printable_run(start(3)) != api_size) {
    return false;
  }
  api = std::string_view(start(3), api_size);

  for (int i = 6; i < fields; ++i) {
    const char* s = start(i);
    const size_t n = size(i);
    if (n < 4 || s[2] != '=' || !is_lower(s[0]) || !is_lower(s[1])) return false;
    const int index = event_fields::index_of(s[0], s[1]);
    if (index < 0) continue;  // a newer writer's field: ignored
    uint64_t value = 0;
    const uint32_t bit = 1u << index;
    if ((e.fields & bit) != 0 || !hex_field(s + 3, n - 3, value) ||
        value > event_fields::kMax[index]) {
      return false;
    }
    event_fields::assign(e, index, value);
    e.fields |= bit;
  }
  return true;
}

}  // namespace capguard::trace
