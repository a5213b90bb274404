// The exact addresses that live execs' nodes hold (what the graph walk found), for the
// framework allocators' hooks (torch_allocator.h): a framework free or reuse is recorded only
// when its block contains one of them, so a training step that frees 10,000 tensors writes
// nothing. Mechanical only: which exec holds what, never whether that is wrong.
//
// One sorted array of (address, exec) for all execs, rebuilt when an exec's walk ends or an
// exec is destroyed (rare); a query is a binary search under a mutex. malloc'd, bounded by
// kMaxEntries (past it, an exec's further addresses are not held: the trace's own graph records
// still let the analyzer judge CUDA-level frees).
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace capguard::interposer {

class HeldMemory {
 public:
  static constexpr size_t kMaxEntries = 4u << 20;  // 64 MiB at most

  HeldMemory() = default;
  HeldMemory(const HeldMemory&) = delete;
  HeldMemory& operator=(const HeldMemory&) = delete;
  ~HeldMemory();

  // An exec's walk (instantiate or update): its earlier addresses go, `add` gathers the new
  // ones, `publish` makes them what queries see.
  void add(uint64_t exec, uint64_t address);
  void publish(uint64_t exec);
  void remove(uint64_t exec);

  // The execs (at most `capacity`, distinct) holding an address in [base, base + size); the
  // number written.
  size_t holders(uint64_t base, uint64_t size, uint64_t* execs, size_t capacity);
  bool any() const { return count_.load(std::memory_order_relaxed) != 0; }

 private:
  struct Entry {
    uint64_t address;
    uint64_t exec;
  };
  // Rebuilds entries_ from itself without `exec`, plus the pending entries of `exec` when
  // `take_pending`. Called with mutex_ held.
  void rebuild(uint64_t exec, bool take_pending);

  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
  Entry* entries_ = nullptr;  // sorted by address, then exec
  size_t size_ = 0;
  std::atomic<size_t> count_{0};  // size_, read without the lock
  Entry* pending_ = nullptr;      // gathered by walks under way (any order, any exec)
  size_t pending_size_ = 0, pending_capacity_ = 0;
};

}  // namespace capguard::interposer
