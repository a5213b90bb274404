// A small open-addressing hash map (linear probing, backward-shift erase) for the replay's
// per-handle state: lookups touch one cache line and never allocate, unlike std::unordered_map.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace capguard {

inline uint64_t mix_hash(uint64_t x) {  // splitmix64 finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <typename Key, typename Value, typename Hash>
class FlatMap {
 public:
  Value* find(const Key& key) {
    if (slots_.empty()) return nullptr;
    for (size_t i = home(key);; i = next(i)) {
      Slot& slot = slots_[i];
      if (!slot.used) return nullptr;
      if (slot.key == key) return &slot.value;
    }
  }
  const Value* find(const Key& key) const { return const_cast<FlatMap*>(this)->find(key); }

  // Returns the value for key, default-constructing it when absent.
  Value& operator[](const Key& key) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    size_t i = home(key);
    for (; slots_[i].used; i = next(i))
      if (slots_[i].key == key) return slots_[i].value;
    slots_[i].used = true;
    slots_[i].key = key;
    slots_[i].value = Value{};
    ++size_;
    return slots_[i].value;
  }

  bool erase(const Key& key) {
    if (slots_.empty()) return false;
    size_t i = home(key);
    for (; slots_[i].used; i = next(i)) {
      if (!(slots_[i].key == key)) continue;
      // Shift later members of the probe run back so that no tombstone is needed.
      size_t hole = i;
      for (size_t j = next(i); slots_[j].used; j = next(j)) {
        size_t want = home(slots_[j].key);
        bool movable = hole <= j ? (want <= hole || want > j) : (want <= hole && want > j);
        if (movable) {
          slots_[hole].key = slots_[j].key;
          slots_[hole].value = std::move(slots_[j].value);
          hole = j;
        }
      }
      slots_[hole].used = false;
      slots_[hole].value = Value{};
      --size_;
      return true;
    }
    return false;
  }

  size_t size() const { return size_; }

  template <typename F>
  void for_each(F&& f) {
    for (Slot& slot : slots_)
      if (slot.used) f(slot.key, slot.value);
  }

 private:
  struct Slot {
    Key key{};
    Value value{};
    bool used = false;
  };
  size_t home(const Key& key) const { return Hash{}(key) & (slots_.size() - 1); }
  size_t next(size_t i) const { return (i + 1) & (slots_.size() - 1); }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
    size_ = 0;
    for (Slot& slot : old)
      if (slot.used) (*this)[slot.key] = std::move(slot.value);
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

struct U64Hash {
  size_t operator()(uint64_t key) const { return static_cast<size_t>(mix_hash(key)); }
};

}  // namespace capguard
