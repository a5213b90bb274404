#include "trace/api_names.h"

#include <cstdint>
#include <cstring>
#include <mutex>

namespace capguard::trace {
namespace {

// The process-wide storage. Never destroyed: names handed out stay valid until exit, static
// destructors included.
struct InternedNames {
  std::mutex mutex;
  std::unordered_set<std::string> names;  // nodes never move, so views into them stay valid
};
InternedNames& interned_names() {
  static auto* names = new InternedNames;
  return *names;
}

uint64_t load_up_to_8(const char* p, size_t n) {
  uint64_t w = 0;
  std::memcpy(&w, p, n < 8 ? n : 8);
  return w;
}

}  // namespace

size_t ApiNames::slot_of(std::string_view name) {
  const size_t n = name.size();
  const uint64_t head = load_up_to_8(name.data(), n);
  const uint64_t tail = n > 8 ? load_up_to_8(name.data() + n - 8, 8) : 0;
  const uint64_t h = (head * 0x9e3779b97f4a7c15ull) ^ (tail * 0xc2b2ae3d27d4eb4full) ^ n;
  return static_cast<size_t>((h ^ (h >> 29)) >> (64 - kSlotBits)) & ((size_t{1} << kSlotBits) - 1);
}

std::string_view ApiNames::intern_slowly(std::string_view name) {
  if (auto it = seen_.find(name); it != seen_.end()) return *it;
  if (seen_.size() >= kMaxPerTrace) {
    error_ = "more than " + std::to_string(kMaxPerTrace) + " distinct API names";
    return {};
  }
  InternedNames& global = interned_names();
  std::string_view stored;
  {
    std::lock_guard lock(global.mutex);
    auto it = global.names.find(std::string(name));
    if (it == global.names.end()) {
      if (global.names.size() >= kMaxPerProcess) {
        error_ =
            "more than " + std::to_string(kMaxPerProcess) + " distinct API names in all traces";
        return {};
      }
      it = global.names.emplace(name).first;
    }
    stored = *it;
  }
  seen_.insert(stored);
  return stored;
}

}  // namespace capguard::trace
