// Offline symbolization: turns the raw return addresses recorded in a trace into function,
// file:line and module, using the module map recorded by the same process (elfutils libdw,
// DWARF line tables first, ELF symbol tables when there is no DWARF). Then picks each
// location's user frame: the first frame that belongs to the program rather than to CUDA,
// capguard's interposer or the C/C++ runtime.
#pragma once

#include <vector>

#include "analyzer/modules.h"
#include "analyzer/report.h"
#include "analyzer/symbol_cache.h"

namespace capguard {

// Fills Location::frames (from Location::addresses, when any were recorded) and
// Location::user_frame for every location in the report: findings, their related locations,
// and the captures' begin and end. A module whose file is missing or whose build-id differs
// from the recorded one yields frames with module and offset only, unless `cache` (frames
// resolved earlier, on the machine that recorded the trace) knows the address.
void symbolize(Report& report, const std::vector<ProcessModules>& modules,
               const SymbolCache* cache = nullptr);

// Who a frame belongs to, judged from its module path and function name.
enum class FrameOwner { Program, Cuda, Interposer, Runtime, Unknown };
FrameOwner owner_of(const Frame& frame);

// Index of the first (innermost) frame owned by the program; -1 when there is none.
int choose_user_frame(const std::vector<Frame>& frames);

}  // namespace capguard
