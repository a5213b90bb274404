#include "trace/api_names.h"

#include <cstdint>
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

}  // namespace

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
