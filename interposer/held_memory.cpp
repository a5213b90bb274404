#include "interposer/held_memory.h"

#include <algorithm>
#include <cstdlib>

namespace capguard::interposer {

HeldMemory::~HeldMemory() {
  free(entries_);
  free(pending_);
}

void HeldMemory::add(uint64_t exec, uint64_t address) {
  pthread_mutex_lock(&mutex_);
  if (pending_size_ == pending_capacity_ && pending_size_ + size_ < kMaxEntries) {
    const size_t capacity = pending_capacity_ != 0 ? 2 * pending_capacity_ : 256;
    if (void* grown = realloc(pending_, capacity * sizeof(Entry))) {
      pending_ = static_cast<Entry*>(grown);
      pending_capacity_ = capacity;
    }
  }
  if (pending_size_ < pending_capacity_) pending_[pending_size_++] = {address, exec};
  pthread_mutex_unlock(&mutex_);
}

void HeldMemory::publish(uint64_t exec) {
  pthread_mutex_lock(&mutex_);
  rebuild(exec, true);
  pthread_mutex_unlock(&mutex_);
}

void HeldMemory::remove(uint64_t exec) {
  pthread_mutex_lock(&mutex_);
  rebuild(exec, false);
  pthread_mutex_unlock(&mutex_);
}

void HeldMemory::rebuild(uint64_t exec, bool take_pending) {
  const auto by_address = [](const Entry& a, const Entry& b) {
    return a.address != b.address ? a.address < b.address : a.exec < b.exec;
  };
  // The exec's pending entries, moved to the front of pending_ and sorted.
  size_t mine = 0;
  for (size_t i = 0; i < pending_size_; ++i)
    if (pending_[i].exec == exec) std::swap(pending_[mine++], pending_[i]);
  std::sort(pending_, pending_ + mine, by_address);
  const size_t unique = static_cast<size_t>(
      std::unique(pending_, pending_ + mine,
                  [](const Entry& a, const Entry& b) { return a.address == b.address; }) -
      pending_);
  const size_t added = take_pending ? unique : 0;
  Entry* next = static_cast<Entry*>(malloc((size_ + added + 1) * sizeof(Entry)));
  if (next != nullptr) {
    // Merge the others' entries with the exec's new ones: both sorted.
    size_t n = 0, a = 0, b = 0;
    while (a < size_ || b < added) {
      if (a < size_ && entries_[a].exec == exec) {
        ++a;
        continue;
      }
      if (b >= added || (a < size_ && by_address(entries_[a], pending_[b]))) {
        next[n++] = entries_[a++];
      } else {
        next[n++] = pending_[b++];
      }
    }
    free(entries_);
    entries_ = next;
    size_ = n;
    count_.store(n, std::memory_order_relaxed);
  }
  // The exec's pending entries are done with either way.
  std::move(pending_ + mine, pending_ + pending_size_, pending_);
  pending_size_ -= mine;
}

size_t HeldMemory::holders(uint64_t base, uint64_t size, uint64_t* execs, size_t capacity) {
  if (!any() || capacity == 0) return 0;
  const uint64_t end = base + (size != 0 ? size : 1);
  size_t found = 0;
  pthread_mutex_lock(&mutex_);
  const Entry* first =
      std::lower_bound(entries_, entries_ + size_, base,
                       [](const Entry& e, uint64_t address) { return e.address < address; });
  for (const Entry* e = first; e != entries_ + size_ && e->address < end; ++e) {
    if (std::find(execs, execs + found, e->exec) != execs + found) continue;
    execs[found++] = e->exec;
    if (found == capacity) break;
  }
  pthread_mutex_unlock(&mutex_);
  return found;
}

}  // namespace capguard::interposer
