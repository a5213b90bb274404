// Internal to the reader: interns API names for the whole process (read_trace promises that
// ApiEvent::api outlives the reader), with a per-trace cache in front of the shared, locked
// storage, and caps on how many distinct names a damaged trace can make it keep.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>

namespace capguard::trace {

class ApiNames {
 public:
  static constexpr size_t kMaxPerTrace = 4096;
  static constexpr size_t kMaxPerProcess = 1 << 16;

  // Returns the interned copy, or an empty view when a cap is reached (error() says which).
  std::string_view intern(std::string_view name) {
    std::string_view& slot = recent_[slot_of(name)];
    if (slot == name) return slot;
    return slot = intern_slowly(name);
  }
  const std::string& error() const { return error_; }

 private:
  // A direct-mapped cache keyed by a cheap hash of the name's ends and length: typical traces
  // use a few dozen names, so nearly every lookup ends here.
  static constexpr int kSlotBits = 10;
  static size_t slot_of(std::string_view name);
  std::string_view intern_slowly(std::string_view name);

  std::array<std::string_view, size_t{1} << kSlotBits> recent_{};
  std::unordered_set<std::string_view> seen_;  // this trace's names, interned
  std::string error_;
};

}  // namespace capguard::trace
