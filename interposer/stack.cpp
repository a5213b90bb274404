#include "interposer/stack.h"

#include <execinfo.h>

namespace capguard::interposer {

uint64_t hash_stack(const uint64_t* addresses, size_t depth) {
  // FNV-1a over the addresses, then a final mix; never 0 so that 0 can mean "empty slot".
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < depth; ++i) {
    h ^= addresses[i];
    h *= 0x100000001b3ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h == 0 ? 1 : h;
}

size_t capture_stack(uint64_t* out, size_t capacity, uint64_t skip_start, uint64_t skip_end) {
  constexpr int kRaw = 96;  // room for the interposer's and CUPTI's frames on top
  void* raw[kRaw];
  const int n = backtrace(raw, kRaw);
  size_t depth = 0;
  for (int i = 0; i < n && depth < capacity; ++i) {
    const auto pc = reinterpret_cast<uint64_t>(raw[i]);
    if (pc >= skip_start && pc < skip_end) continue;
    out[depth++] = pc;
  }
  return depth;
}

}  // namespace capguard::interposer
