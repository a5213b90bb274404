#include "symbolize/modules.h"

namespace capguard {

const Module* ProcessModules::find(uint64_t address) const {
  // The newest mapping wins: a range reused after dlclose belongs to the later module.
  for (auto it = modules.rbegin(); it != modules.rend(); ++it)
    if (address >= it->start && address < it->end) return &*it;
  return nullptr;
}

}  // namespace capguard
