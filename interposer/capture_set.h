// The origin streams of the captures open in this process, as a small lock-free set. The hot
// path only asks any(): while it is false, calls outside the record policy cost one atomic load.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace capguard::interposer {

class CaptureSet {
 public:
  static constexpr size_t kSlots = 64;

  void add(uint64_t stream);
  // Returns true if the stream was in the set.
  bool remove(uint64_t stream);
  bool contains(uint64_t stream) const;
  bool any() const { return count_.load(std::memory_order_acquire) != 0; }
  void clear();

 private:
  std::atomic<uint64_t> slots_[kSlots] = {};
  // Captures that did not fit: never forgotten, so recording stays on (safe, just slower).
  std::atomic<uint32_t> overflow_{0};
  std::atomic<uint32_t> count_{0};
};

}  // namespace capguard::interposer
