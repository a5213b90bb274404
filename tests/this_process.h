// The module map of the test process itself, recorded the way the interposer records it: real
// ELF files with build-ids and DWARF for the symbolizer's tests.
#pragma once

#include <doctest/doctest.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <string>

#include "symbolize/modules.h"

namespace capguard {

inline std::string build_id_of(const dl_phdr_info& info) {
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const char* p = reinterpret_cast<const char*>(info.dlpi_addr + ph.p_vaddr);
    const char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const char* desc = p + sizeof(ElfW(Nhdr)) + ((note->n_namesz + 3) & ~3u);
      if (note->n_type == NT_GNU_BUILD_ID) {
        std::string hex;
        for (unsigned j = 0; j < note->n_descsz; ++j) {
          char byte[3];
          snprintf(byte, sizeof byte, "%02x", static_cast<unsigned char>(desc[j]));
          hex += byte;
        }
        return hex;
      }
      p = desc + ((note->n_descsz + 3) & ~3u);
    }
  }
  return {};
}

inline ProcessModules modules_of_this_process() {
  ProcessModules process;
  process.pid = static_cast<uint32_t>(getpid());
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        Module module;
        module.base = info->dlpi_addr;
        module.start = UINT64_MAX;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          module.start = std::min<uint64_t>(module.start, info->dlpi_addr + ph.p_vaddr);
          module.end = std::max<uint64_t>(module.end, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        }
        module.path = info->dlpi_name;
        if (module.path.empty()) {
          char exe[PATH_MAX] = {};
          if (readlink("/proc/self/exe", exe, sizeof exe - 1) > 0) module.path = exe;
        }
        module.build_id = build_id_of(*info);
        if (module.start != UINT64_MAX && !module.path.empty())
          static_cast<ProcessModules*>(data)->modules.push_back(module);
        return 0;
      },
      &process);
  return process;
}

inline std::string executable_path() {
  char exe[PATH_MAX] = {};
  REQUIRE(readlink("/proc/self/exe", exe, sizeof exe - 1) > 0);
  return exe;
}

}  // namespace capguard
