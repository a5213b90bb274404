// Internal to the reader: walks the fields of one record line. Fields follow the record type
// and are separated by exactly one space, so an empty field (an empty escaped string) can be
// represented. The hot paths use trace/line_scan.h; the careful byte loops behind them
// decide every unusual case (long numbers, leading zeros, damage) and say what is wrong.
//
// The line must be followed in memory by '\n' and 16 more readable bytes (see line_scan.h).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "trace/line_scan.h"

namespace capguard::trace {

enum class Hex { Ok, Missing, NotHex, Overflow };

// Digit values; -1 for anything else. Numbers are lower-case only, escapes take both cases.
constexpr std::array<int8_t, 256> make_hex_table(bool upper_too) {
  std::array<int8_t, 256> table{};
  for (auto& v : table) v = -1;
  for (int i = 0; i < 10; ++i) table['0' + i] = static_cast<int8_t>(i);
  for (int i = 0; i < 6; ++i) {
    table['a' + i] = static_cast<int8_t>(10 + i);
    if (upper_too) table['A' + i] = static_cast<int8_t>(10 + i);
  }
  return table;
}
inline constexpr auto kLowerHex = make_hex_table(false);
inline constexpr auto kAnyHex = make_hex_table(true);

class FieldCursor {
 public:
  // `line` includes the record type character.
  explicit FieldCursor(std::string_view line)
      : pos_(line.data() + (line.size() < 2 ? line.size() : 2)),
        end_(line.data() + line.size()),
        done_(line.size() < 2) {}

  bool done() const { return done_; }
  // The first byte of the next field ('\0' at the end or for an empty field).
  char peek() const { return done_ || pos_ == end_ ? '\0' : *pos_; }

  // The next field, up to the following space.
  bool next(std::string_view& field) {
    if (done_) return false;
    const char* start = pos_;
    while (pos_ != end_ && *pos_ != ' ') ++pos_;
    field = std::string_view(start, static_cast<size_t>(pos_ - start));
    step_over_space();
    return true;
  }

  // The next field as lower-case hex. `field` is the whole field, for messages.
  Hex next_hex(uint64_t& out, std::string_view& field) {
    if (done_) return Hex::Missing;
    const char* const start = pos_;
    uint64_t value = 0;
    const int n = scan::hex_prefix(start, value);
    const char* const after = start + n;
    if (n > 0 && n < 16 && after <= end_ && (after == end_ || *after == ' ')) [[likely]] {
      field = std::string_view(start, static_cast<size_t>(n));
      pos_ = after;
      step_over_space();
      out = value;
      return Hex::Ok;
    }
    return next_hex_carefully(out, field);
  }

  // The next field as key=hex: `key` is empty when the field has no '=' or nothing before it;
  // the value is parsed as by next_hex(). `field` is the whole field, for messages.
  Hex next_key_value(std::string_view& key, uint64_t& value, std::string_view& field) {
    const char* const start = pos_;
    if (end_ - start >= 3 && start[2] == '=' && is_key_byte(start[0]) && is_key_byte(start[1])) {
      pos_ = start + 3;  // the usual two-letter key
    } else {
      while (pos_ != end_ && *pos_ != '=' && *pos_ != ' ') ++pos_;
      if (pos_ == start || pos_ == end_ || *pos_ != '=') {
        key = {};
        pos_ = start;
        next(field);
        return Hex::NotHex;
      }
      ++pos_;
    }
    key = std::string_view(start, static_cast<size_t>(pos_ - 1 - start));
    std::string_view value_field;
    const Hex status = next_hex(value, value_field);
    field = std::string_view(start,
                             static_cast<size_t>(value_field.data() + value_field.size() - start));
    return status;
  }

  // The next field, and whether all its bytes are in 0x21..0x7e.
  bool next_printable(std::string_view& field, bool& printable) {
    if (done_) return false;
    const char* const start = pos_;
    const char* const stop = start + scan::printable_run(start);
    if (stop <= end_ && (stop == end_ || *stop == ' ')) [[likely]] {
      printable = true;
      field = std::string_view(start, static_cast<size_t>(stop - start));
      pos_ = stop;
      step_over_space();
      return true;
    }
    printable = false;  // a byte outside the range before the field's end
    return next(field);
  }

 private:
  static bool is_key_byte(char c) { return c != ' ' && c != '='; }

  void step_over_space() {
    if (pos_ == end_) {
      done_ = true;
    } else {
      ++pos_;
    }
  }

  Hex next_hex_carefully(uint64_t& out, std::string_view& field) {
    const char* const start = pos_;
    uint64_t value = 0;
    bool overflow = false;
    for (; pos_ != end_; ++pos_) {
      const int digit = kLowerHex[static_cast<unsigned char>(*pos_)];
      if (digit < 0) break;
      overflow |= (value >> 60) != 0;
      value = (value << 4) | static_cast<uint64_t>(digit);
    }
    const bool clean_end = pos_ == end_ || *pos_ == ' ';
    if (pos_ == start || !clean_end || overflow) {
      const Hex status = pos_ != start && clean_end ? Hex::Overflow : Hex::NotHex;
      pos_ = start;
      next(field);
      return status;
    }
    field = std::string_view(start, static_cast<size_t>(pos_ - start));
    step_over_space();
    out = value;
    return Hex::Ok;
  }

  const char* pos_;
  const char* end_;
  bool done_;
};

}  // namespace capguard::trace
