// Internal to the reader: a program's event lines repeat from the API name on (the same call
// site calls the same API on the same stream and event, with the same result and stack id);
// only seq, time and tid change. This direct-mapped cache hands back what the event fast path
// parsed from the same tail bytes before, so a repeated line costs three numbers and a compare.
//
// A tail's meaning does not depend on the fields before it (the careful parser reads fields in
// order, each by itself), so an entry stays what both parsers would make of those bytes.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string_view>

#include "trace/event.h"
#include "trace/line_scan.h"

namespace capguard::trace {

class EventTailCache {
 public:
  static constexpr size_t kMaxTail = 64;  // longer tails are parsed every time

  static constexpr size_t kSlots = 256;  // a training step's distinct call sites, most of them

  EventTailCache() : entries_(std::make_unique<Entry[]>(kSlots)) {}

  // The event last stored for these bytes, or null (then store() may keep this line's). `tail`
  // is followed in memory by 8 readable bytes; its event's seq, time and tid are the caller's.
  [[gnu::always_inline]] ApiEvent* find(std::string_view tail) {
    const int slot = find_slot(tail);
    return slot < 0 ? nullptr : &entries_[static_cast<size_t>(slot)].event;
  }

  // The slot that holds these bytes, or -1 (then store() or store_key() may keep them in the
  // slot pending_slot() names). The parse-ahead threads keep only the keys; the events of their
  // slots are the reading thread's (parse_ahead.h).
  [[gnu::always_inline]] int find_slot(std::string_view tail) {
    pending_ = nullptr;
    const size_t n = tail.size();
    if (n == 0 || n > kMaxTail) return -1;
    const size_t words = (n + 7) / 8;
    uint64_t key[kWords];
    uint64_t hash = n;
#pragma GCC unroll 8
    for (size_t i = 0; i < kWords; ++i) {
      uint64_t w = i < words ? scan::load8(tail.data() + 8 * i) : 0;
      if (i == words - 1 && n % 8 != 0) w &= (uint64_t{1} << (8 * (n % 8))) - 1;
      key[i] = w;
      hash += w * kMultipliers[i];  // independent products: they overlap
    }
    // The slot is the sum's top byte, which every bit of every word reaches through its odd
    // multiplier: no finalizer after it (over the distinct tails of each recorded trace of
    // testcases/, as many tails share a slot as with splitmix's). A collision costs a miss.
    const size_t slot = hash >> (64 - kSlotBits);
    Entry& entry = entries_[slot];
    uint64_t differ = entry.size ^ n;
#pragma GCC unroll 8
    for (size_t i = 0; i < kWords; ++i) differ |= entry.key[i] ^ key[i];
    if (differ == 0) return static_cast<int>(slot);
    // Kept for store() only on a miss: written here and read back wider at once, it would stall
    // store forwarding on every hit.
    std::copy(std::begin(key), std::end(key), std::begin(key_));
    size_ = n;
    pending_ = &entry;
    return -1;
  }

  // The slot the last find_slot() missed in, or -1 when it took no tail (empty, too long).
  int pending_slot() const {
    return pending_ == nullptr ? -1 : static_cast<int>(pending_ - entries_.get());
  }

  // Keeps the tail the last find() missed, and no event.
  void store_key() {
    if (pending_ == nullptr) return;
    std::copy(std::begin(key_), std::end(key_), std::begin(pending_->key));
    pending_->size = size_;
    pending_ = nullptr;
  }

  // Keeps `event` for the tail the last find() missed.
  void store(const ApiEvent& event) {
    if (pending_ == nullptr) return;
    pending_->event = event;
    store_key();
  }

 private:
  static constexpr size_t kWords = kMaxTail / 8;
  static constexpr int kSlotBits = std::countr_zero(kSlots);
  static constexpr uint64_t kMultipliers[kWords] = {
      0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull, 0xd6e8feb86659fd93ull,
      0xff51afd7ed558ccdull, 0xc4ceb9fe1a85ec53ull, 0x94d049bb133111ebull, 0x2545f4914f6cdd1dull};

  // 256 bytes, aligned: the slot's address is a shift of the hash, not a multiply.
  struct alignas(256) Entry {
    uint64_t key[kWords] = {};  // the tail's bytes, zero past its end
    uint64_t size = 0;          // 0: empty
    ApiEvent event;
  };
  static_assert(sizeof(Entry) == 256);

  std::unique_ptr<Entry[]> entries_;
  uint64_t key_[kWords] = {};  // the last find()'s tail
  uint64_t size_ = 0;
  Entry* pending_ = nullptr;
};

}  // namespace capguard::trace
