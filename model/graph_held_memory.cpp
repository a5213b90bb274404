#include "model/graph_held_memory.h"

#include <algorithm>
#include <tuple>

#include "model/graph_lifetime.h"

namespace capguard {
namespace {

struct HeldAddress {
  uint64_t address = 0;
  bool released = false;
  const MemoryBlock* block = nullptr;  // from a hit: the freed block, or the one that reused it
};

// The hit of `exec` whose block holds `address` (hits sorted by base), else null.
const GraphHit* hit_at(const std::vector<const GraphHit*>& hits, uint64_t address) {
  auto it = std::upper_bound(hits.begin(), hits.end(), address,
                             [](uint64_t a, const GraphHit* h) { return a < h->block.base; });
  // Blocks of hits may nest (a tensor's block, then its segment freed): a few back, not all.
  for (int back = 0; it != hits.begin() && back < 8; ++back)
    if ((*--it)->block.contains(address)) return *it;
  return nullptr;
}

using RowKey = std::tuple<bool, std::string_view, uint32_t, bool, bool, std::string_view>;

}  // namespace

std::vector<std::vector<HeldRowFacts>> held_memory_by_site(
    std::span<const ExecState* const> live, const std::map<uint64_t, MemoryBlock>& blocks,
    size_t sites, const std::function<uint32_t(uint32_t)>& stack_key) {
  std::vector<std::vector<HeldAddress>> held(sites);
  std::vector<const GraphHit*> hits;
  for (const ExecState* exec : live) {
    if (exec->lifecycle_site >= sites || exec->all_dropped) continue;
    hits.clear();
    for (const GraphHit& hit : exec->hits) hits.push_back(&hit);
    std::sort(hits.begin(), hits.end(),
              [](const GraphHit* a, const GraphHit* b) { return a->block.base < b->block.base; });
    std::vector<HeldAddress>& into = held[exec->lifecycle_site];
    for (const NodeRef& ref : exec->refs) {
      if (exec->ref_dropped(ref)) continue;
      const GraphHit* hit = hits.empty() ? nullptr : hit_at(hits, ref.address);
      const MemoryBlock* block = hit == nullptr   ? nullptr
                                 : hit->reused_by ? &*hit->reused_by
                                                  : &hit->block;
      into.push_back({ref.address, hit != nullptr, block});
    }
  }
  std::vector<std::vector<HeldRowFacts>> rows(sites);
  for (size_t s = 0; s < sites; ++s) {
    std::vector<HeldAddress>& addresses = held[s];
    // Each address once, released if any exec's was, with a hit's block first.
    std::sort(addresses.begin(), addresses.end(), [](const HeldAddress& a, const HeldAddress& b) {
      return a.address != b.address ? a.address < b.address : a.released > b.released;
    });
    std::map<RowKey, size_t> index;
    std::vector<uint64_t> last_base;  // per row: the block its last address was in
    size_t other = SIZE_MAX;
    for (size_t i = 0; i < addresses.size(); ++i) {
      const HeldAddress& a = addresses[i];
      if (i != 0 && addresses[i - 1].address == a.address) continue;
      const MemoryBlock* block = a.block;
      if (block == nullptr) {
        auto it = blocks.upper_bound(a.address);
        if (it != blocks.begin() && (--it)->second.contains(a.address)) block = &it->second;
      }
      const RowKey key = block == nullptr
                             ? RowKey{true, {}, 0, false, false, {}}
                             : RowKey{false,
                                      block->owner,
                                      block->alloc.known ? stack_key(block->alloc.stack) : 0,
                                      block->alloc.known,
                                      block->in_capture,
                                      block->alloc.api};
      auto found = index.find(key);
      size_t row = 0;
      if (found != index.end()) {
        row = found->second;
      } else if (index.size() < kMaxHeldRowsPerSite) {
        row = rows[s].size();
        index.emplace(key, row);
        HeldRowFacts& fresh = rows[s].emplace_back();
        fresh.unknown = block == nullptr;
        if (block != nullptr) {
          fresh.event_owner = block->owner;
          fresh.alloc = block->alloc;
          fresh.in_capture = block->in_capture;
        }
        last_base.push_back(UINT64_MAX);
      } else {
        if (other == SIZE_MAX) {
          other = rows[s].size();
          rows[s].emplace_back().other_rows = true;
          last_base.push_back(UINT64_MAX);
        }
        row = other;
      }
      HeldRowFacts& r = rows[s][row];
      ++r.addresses;
      r.released += a.released ? 1 : 0;
      if (block != nullptr && last_base[row] != block->base) {  // sorted: a block's run is one
        last_base[row] = block->base;
        ++r.blocks;
        r.bytes += block->size;
      }
    }
    std::stable_sort(rows[s].begin(), rows[s].end(),
                     [](const HeldRowFacts& a, const HeldRowFacts& b) {
                       const int la = a.other_rows ? 2 : a.unknown ? 1 : 0;
                       const int lb = b.other_rows ? 2 : b.unknown ? 1 : 0;
                       if (la != lb) return la < lb;
                       return a.bytes != b.bytes ? a.bytes > b.bytes : a.addresses > b.addresses;
                     });
  }
  return rows;
}

}  // namespace capguard
