// A caching allocator for Thrust's temporary storage, in the manner of Thrust's
// custom_temporary_allocation example: blocks come from cudaMalloc the first time (outside any
// capture, during a warm-up) and are handed out again afterwards, so algorithms run inside a
// capture never allocate. Blocks live until the allocator is destroyed.
#pragma once

#include <cstddef>
#include <map>

#include "common.h"

class CachingAllocator {
 public:
  using value_type = char;

  CachingAllocator() = default;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;
  ~CachingAllocator() {
    for (auto& [block, size] : free_) CHECK(cudaFree(block));
    for (auto& [block, size] : used_) CHECK(cudaFree(block));
  }

  char* allocate(std::ptrdiff_t bytes) {
    const size_t size = static_cast<size_t>(bytes);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < size) continue;
      used_.insert(*it);
      char* block = it->first;
      free_.erase(it);
      return block;
    }
    char* block = nullptr;
    CHECK(cudaMalloc(&block, size));
    used_[block] = size;
    return block;
  }

  void deallocate(char* block, size_t) {
    auto it = used_.find(block);
    if (it == used_.end()) return;
    free_.insert(*it);
    used_.erase(it);
  }

 private:
  std::map<char*, size_t> free_, used_;
};
