// Host stacks: capture (raw return addresses) and per-thread deduplication. Each distinct stack
// gets a process-wide id the first time a thread sees it, and that thread writes its 's'
// record together with the event that first uses it, so a definition always precedes its uses
// in the file however threads interleave. Two threads seeing the same stack define it twice,
// under different ids: cheaper than any cross-thread coordination.
#pragma once

#include <cstddef>
#include <cstdint>

namespace capguard::interposer {

uint64_t hash_stack(const uint64_t* addresses, size_t depth);

// A direct-mapped cache from stack hash to id: fixed size, no allocation. A slot collision
// evicts the older stack, which is then simply defined again under a new id.
class StackCache {
 public:
  static constexpr size_t kSlots = 256;

  uint32_t find(uint64_t hash) const {  // 0 = not cached
    const size_t i = hash % kSlots;
    return hashes_[i] == hash ? ids_[i] : 0;
  }
  void insert(uint64_t hash, uint32_t id) {
    const size_t i = hash % kSlots;
    hashes_[i] = hash;
    ids_[i] = id;
  }
  void clear() {
    for (size_t i = 0; i < kSlots; ++i) ids_[i] = 0, hashes_[i] = 0;
  }

 private:
  uint64_t hashes_[kSlots] = {};
  uint32_t ids_[kSlots] = {};
};

// Captures the calling thread's stack, innermost first, leaving out the frames that lie in
// [skip_start, skip_end) (the interposer's own code). Returns the depth written.
size_t capture_stack(uint64_t* out, size_t capacity, uint64_t skip_start, uint64_t skip_end);

}  // namespace capguard::interposer
