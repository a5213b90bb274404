#include "trace/api_names.h"

namespace capguard::trace {

std::string_view ApiNameStore::intern(std::string_view name) {
  if (auto it = index_.find(name); it != index_.end()) return *it;
  if (index_.size() >= kMaxNames) return {};
  const std::string& stored = names_.emplace_back(name);
  index_.insert(stored);
  return stored;
}

std::string_view ApiNames::intern_slowly(std::string_view name) {
  const std::string_view stored = store_.intern(name);
  if (stored.empty())
    error_ =
        "more than " + std::to_string(ApiNameStore::kMaxNames) + " distinct API names in one trace";
  return stored;
}

}  // namespace capguard::trace
