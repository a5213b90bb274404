// Internal to the reader: the parser's front for its sink's ApiNameStore (reader.h), a cache
// that answers nearly every event's name without a hash lookup.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "trace/reader.h"

namespace capguard::trace {

class ApiNames {
 public:
  explicit ApiNames(ApiNameStore& store) : store_(store) {}

  // Returns the stored copy, or an empty view when the store is full (error() says so).
  std::string_view intern(std::string_view name) {
    std::string_view& slot = recent_[slot_of(name)];
    if (same(slot, name)) return slot;
    return slot = intern_slowly(name);
  }
  const std::string& error() const { return error_; }

 private:
  // A direct-mapped cache keyed by a cheap hash of the name's ends and length: typical traces
  // use a few dozen names, so nearly every lookup ends here.
  static constexpr int kSlotBits = 10;
  static uint64_t load_up_to_8(const char* p, size_t n) {
    uint64_t w = 0;
    std::memcpy(&w, p, n < 8 ? n : 8);
    return w;
  }
  static size_t slot_of(std::string_view name) {
    const size_t n = name.size();
    const uint64_t head = load_up_to_8(name.data(), n);
    const uint64_t tail = n > 8 ? load_up_to_8(name.data() + n - 8, 8) : 0;
    const uint64_t h = (head * 0x9e3779b97f4a7c15ull) ^ (tail * 0xc2b2ae3d27d4eb4full) ^ n;
    return static_cast<size_t>((h ^ (h >> 29)) >> (64 - kSlotBits));
  }
  // a == b, a word at a time (inline: nearly every event's name is compared here once).
  static bool same(std::string_view a, std::string_view b) {
    const size_t n = a.size();
    if (n != b.size()) return false;
    if (n < 8) return a == b;
    for (size_t i = 0; i + 8 < n; i += 8)
      if (load_up_to_8(a.data() + i, 8) != load_up_to_8(b.data() + i, 8)) return false;
    return load_up_to_8(a.data() + n - 8, 8) == load_up_to_8(b.data() + n - 8, 8);
  }
  std::string_view intern_slowly(std::string_view name);

  ApiNameStore& store_;
  std::array<std::string_view, size_t{1} << kSlotBits> recent_{};
  std::string error_;
};

}  // namespace capguard::trace
