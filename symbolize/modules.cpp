#include "symbolize/modules.h"

#include <algorithm>
#include <map>

namespace capguard {

const Module* ProcessModules::find(uint64_t address) const {
  if (indexed_ != modules.size() || indexed_data_ != modules.data()) {
    // The records painted in order onto the address space, each over those before it (the
    // newest mapping wins: a range reused after dlclose belongs to the later module). Each
    // record splits at most two segments and erases those it covers: O(n log n) in all.
    struct Painted {
      uint64_t end;
      uint32_t module;
    };
    std::map<uint64_t, Painted> painted;
    auto split = [&](uint64_t at) {
      auto it = painted.upper_bound(at);
      if (it == painted.begin()) return;
      --it;
      if (it->first < at && it->second.end > at) {
        painted.emplace(at, Painted{it->second.end, it->second.module});
        it->second.end = at;
      }
    };
    for (size_t i = 0; i < modules.size(); ++i) {
      const Module& m = modules[i];
      if (m.start >= m.end) continue;
      split(m.start);
      split(m.end);
      painted.erase(painted.lower_bound(m.start), painted.lower_bound(m.end));
      painted.emplace(m.start, Painted{m.end, static_cast<uint32_t>(i)});
    }
    index_.clear();
    index_.reserve(painted.size());
    for (const auto& [start, p] : painted) index_.push_back({start, p.end, p.module});
    indexed_ = modules.size();
    indexed_data_ = modules.data();
  }
  auto it = std::upper_bound(index_.begin(), index_.end(), address,
                             [](uint64_t a, const Segment& s) { return a < s.start; });
  if (it == index_.begin()) return nullptr;
  --it;
  return address < it->end ? &modules[it->module] : nullptr;
}

}  // namespace capguard
