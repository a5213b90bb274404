// The module map of one traced process: which object was loaded where, for symbolization.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace capguard {

struct Module {
  uint64_t base = 0;   // load bias (dlpi_addr): file address = runtime address - base
  uint64_t start = 0;  // first mapped byte
  uint64_t end = 0;    // one past the last mapped byte
  std::string path;
  std::string build_id;
};

struct ProcessModules {
  uint32_t pid = 0;
  std::vector<Module> modules;
  const Module* find(uint64_t address) const;  // nullptr when no module maps it
};

}  // namespace capguard
