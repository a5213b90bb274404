// Offline symbolization: turns the raw return addresses recorded in a trace into function,
// file:line and module, using the module map recorded by the same process (elfutils libdw,
// DWARF line tables first, ELF symbol tables when there is no DWARF). Then picks each
// location's user frame (frame_owner.h): the innermost frame of the program's own code, not
// CUDA's, capguard's, the C/C++ runtime's or a library's.
#pragma once

#include <string>
#include <vector>

#include "model/frame_owner.h"
#include "model/report.h"
#include "symbolize/module_cache.h"
#include "symbolize/modules.h"
#include "symbolize/symbol_cache.h"
#include "util/demangle.h"

namespace capguard {

// Fills Location::frames (from Location::addresses, when any were recorded) and
// Location::user_frame for every location in the report: findings, their related locations,
// and the captures' begin and end. A module whose file is missing or whose build-id differs
// from the recorded one yields frames with module and offset only, unless `cache` (frames
// resolved earlier, on the machine that recorded the trace) knows the address. `user`: what
// the user said their code is (--user-code).
//
// Budgets: an address inside inline scopes nested deeper than kMaxInlineDepth gets
// only its outer function (the ELF symbol and the line table's file:line), no inlined frames;
// libdw's scope walk of such a chain is cubic. Such addresses are counted in the result.
inline constexpr int kMaxInlineDepth = 64;
// Compressed debug sections (SHF_COMPRESSED, GNU .zdebug) inflate in memory when libdw reads
// them: a module whose sections would inflate past kMaxInflatedPerModule, or past what is left
// of kMaxInflatedTotal over all modules opened, is not read for names (module and offset only).
inline constexpr uint64_t kMaxInflatedPerModule = uint64_t{256} << 20;
inline constexpr uint64_t kMaxInflatedTotal = uint64_t{1} << 30;
struct SymbolizeStats {
  uint64_t deep_inline_addresses = 0;    // addresses whose inline scopes were cut off
  std::vector<std::string> over_budget;  // modules not read: compressed debug data too large
  uint64_t read_addresses = 0;           // addresses resolved by reading their module
  uint64_t cached_addresses = 0;         // addresses answered by the module cache
};
// `module_cache`: the persistent cache (module_cache.h), or null for none; entries it gained
// are written before this returns. Either way a module file with a build-id is read once
// however many processes map it. Separate debug files are looked for locally only
// (symbolize/debug_files.h); `debuginfod`: then also from the servers of DEBUGINFOD_URLS.
SymbolizeStats symbolize(Report& report, const std::vector<ProcessModules>& modules,
                         const SymbolCache* cache = nullptr, const UserCode& user = {},
                         ModuleCache* module_cache = nullptr, bool debuginfod = false);

// Puts a stack's Python frames (innermost first) where the interpreter runs them: before the
// first native frame of the interpreter (a python3.X executable or libpython), or after all
// native frames when none is seen (an unsymbolized or clamped stack).
void interleave_python_frames(std::vector<Frame>& native, const std::vector<Frame>& python);

}  // namespace capguard
