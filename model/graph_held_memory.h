// The lifecycle table's held memory: per capture site, the memory its execs alive at exit hold,
// grouped by whose memory it is, so that a user sees before a free what it would break. From
// what the replay already has: each exec's node references (the graph walk: every address it
// holds), the live allocations with their stacks, a framework allocator's events for blocks an
// exec held, and the releases that hit an exec (GraphHit). Facts, no judgement; the owners are
// named after symbolization (model/framework_calls.def, Owner rows), where the stacks say it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string_view>
#include <vector>

#include "model/capture_model.h"

namespace capguard {

struct ExecState;
struct MemoryBlock;

// One row before the replay turns the allocation's site into a location.
struct HeldRowFacts {
  std::string_view
      event_owner;          // trace/framework_memory.def's owner, when its events gave the block
  Site alloc;               // the allocation (a framework pool's segment); unknown: not known
  bool in_capture = false;  // allocated by a capturing thread while its capture was open
  bool unknown = false;     // no allocation capguard saw holds the addresses
  bool other_rows = false;  // the rows past kMaxHeldRowsPerSite, summed
  uint64_t blocks = 0, bytes = 0, addresses = 0, released = 0;
};

inline constexpr size_t kMaxHeldRowsPerSite = 32;  // then one summed row: bounded per site

// The rows of each of `sites` lifecycle sites (ExecState::lifecycle_site), most bytes first, the
// unknown and summed rows last. `blocks`: the live CUDA allocations by base; `stack_key`: the id
// standing for all stacks of one content (rows of one allocating stack are one row). Time:
// O(R log R) for R references held, whatever the number of allocations.
std::vector<std::vector<HeldRowFacts>> held_memory_by_site(
    std::span<const ExecState* const> live, const std::map<uint64_t, MemoryBlock>& blocks,
    size_t sites, const std::function<uint32_t(uint32_t)>& stack_key);

}  // namespace capguard
