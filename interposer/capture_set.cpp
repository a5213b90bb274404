#include "interposer/capture_set.h"

namespace capguard::interposer {

// Stream handle 0 (legacy) never captures, so 0 marks a free slot.
void CaptureSet::add(uint64_t stream) {
  if (stream == 0 || contains(stream)) return;
  for (auto& slot : slots_) {
    uint64_t expected = 0;
    if (slot.compare_exchange_strong(expected, stream, std::memory_order_acq_rel)) {
      count_.fetch_add(1, std::memory_order_acq_rel);
      return;
    }
  }
  overflow_.fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_acq_rel);
}

bool CaptureSet::remove(uint64_t stream) {
  if (stream == 0) return false;
  for (auto& slot : slots_) {
    uint64_t expected = stream;
    if (slot.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) {
      count_.fetch_sub(1, std::memory_order_acq_rel);
      return true;
    }
  }
  return false;
}

bool CaptureSet::contains(uint64_t stream) const {
  if (stream == 0) return false;  // 0 marks a free slot, never a stream asked about
  for (const auto& slot : slots_) {
    if (slot.load(std::memory_order_acquire) == stream) return true;
  }
  return false;
}

void CaptureSet::clear() {
  for (auto& slot : slots_) slot.store(0, std::memory_order_relaxed);
  overflow_.store(0, std::memory_order_relaxed);
  count_.store(0, std::memory_order_release);
}

}  // namespace capguard::interposer
