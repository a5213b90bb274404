#include "interposer/graph_watch.h"

#include <cstdlib>

namespace capguard::interposer {
namespace {

constexpr uint64_t kTombstone = ~0ull;

size_t slot_of(uint64_t exec) {
  return static_cast<size_t>((exec * 0x9e3779b97f4a7c15ull) >> 54) % GraphWatch::kSlots;
}
uint64_t bloom_bit(uint64_t base) { return 1ull << ((base * 0x9e3779b97f4a7c15ull) >> 58); }

}  // namespace

GraphWatch::Slot* GraphWatch::find(uint64_t exec) {
  if (exec == 0 || exec == kTombstone) return nullptr;
  size_t i = slot_of(exec);
  for (size_t probe = 0; probe < kSlots; ++probe, i = (i + 1) % kSlots) {
    const uint64_t here = slots_[i].exec.load(std::memory_order_acquire);
    if (here == exec) return &slots_[i];
    if (here == 0) return nullptr;
  }
  return nullptr;
}

void GraphWatch::set_interesting(Slot& slot, bool interesting) {
  if (slot.interesting.exchange(interesting) != interesting) {
    interest_.fetch_add(interesting ? 1 : -1, std::memory_order_acq_rel);
  }
}

void GraphWatch::on_instantiate(uint64_t exec) {
  if (exec == 0 || exec == kTombstone) return;
  any_exec_.store(true, std::memory_order_relaxed);
  pthread_mutex_lock(&mutex_);
  Slot* slot = find(exec);
  if (slot == nullptr) {
    size_t i = slot_of(exec);
    for (size_t probe = 0; probe < kSlots; ++probe, i = (i + 1) % kSlots) {
      const uint64_t here = slots_[i].exec.load(std::memory_order_relaxed);
      if (here == 0 || here == kTombstone) {
        slot = &slots_[i];
        break;
      }
    }
  }
  if (slot == nullptr) {
    overflow_.store(true, std::memory_order_relaxed);
  } else {
    if (slot->exec.load(std::memory_order_relaxed) != exec) live_.fetch_add(1);
    slot->base_count = 0;
    slot->bloom = 0;
    drop_nodes(*slot);
    slot->launches.store(0, std::memory_order_relaxed);
    slot->watched.store(false, std::memory_order_relaxed);
    slot->exec.store(exec, std::memory_order_release);
    set_interesting(*slot, true);
  }
  newest_.store(exec, std::memory_order_relaxed);
  other_budget_.store(live_.load() > 1 || overflow_.load() ? kOtherLaunchBudget : 0,
                      std::memory_order_relaxed);
  pthread_mutex_unlock(&mutex_);
}

void GraphWatch::add_base(uint64_t exec, uint64_t base) {
  pthread_mutex_lock(&mutex_);
  if (Slot* slot = find(exec)) {
    bool known = false;
    for (uint32_t i = 0; i < slot->base_count; ++i) known |= slot->bases[i] == base;
    if (!known) {
      if (slot->base_count < kExactBases) {
        slot->bases[slot->base_count++] = base;
      } else {
        slot->bloom |= bloom_bit(base);
      }
    }
  }
  pthread_mutex_unlock(&mutex_);
}

void GraphWatch::drop_nodes(Slot& slot) {
  std::free(slot.nodes);
  slot.nodes = nullptr;
  slot.node_count = 0;
}

void GraphWatch::set_nodes(uint64_t exec, uint64_t* pairs, uint32_t count) {
  pthread_mutex_lock(&mutex_);
  Slot* slot = find(exec);
  if (slot != nullptr) {
    drop_nodes(*slot);
    slot->nodes = pairs;
    slot->node_count = count;
  }
  pthread_mutex_unlock(&mutex_);
  if (slot == nullptr) std::free(pairs);
}

bool GraphWatch::node_index(uint64_t exec, uint64_t node, uint32_t& index) {
  bool found = false;
  pthread_mutex_lock(&mutex_);
  if (const Slot* slot = find(exec)) {
    for (uint32_t i = 0; i < slot->node_count && !found; ++i) {
      if (slot->nodes[2 * i] == node) {
        index = static_cast<uint32_t>(slot->nodes[2 * i + 1]);
        found = true;
      }
    }
  }
  pthread_mutex_unlock(&mutex_);
  return found;
}

void GraphWatch::on_destroy(uint64_t exec) {
  pthread_mutex_lock(&mutex_);
  if (Slot* slot = find(exec)) {
    set_interesting(*slot, false);
    drop_nodes(*slot);
    slot->exec.store(kTombstone, std::memory_order_release);
    live_.fetch_sub(1);
  }
  pthread_mutex_unlock(&mutex_);
}

void GraphWatch::on_free(uint64_t base, uint64_t size) {
  if (!any_exec_.load(std::memory_order_relaxed)) return;
  if (live_.load(std::memory_order_relaxed) <= 0 && !overflow_.load(std::memory_order_relaxed))
    return;
  if (overflow_.load(std::memory_order_relaxed)) overflow_watched_.store(true);
  const uint64_t end = size != 0 ? base + size : base + 1;
  pthread_mutex_lock(&mutex_);
  for (Slot& slot : slots_) {
    const uint64_t exec = slot.exec.load(std::memory_order_relaxed);
    if (exec == 0 || exec == kTombstone) continue;
    bool hit = size == 0 ? false : (slot.bloom != 0);  // a range: any bloomed base may be in it
    if (slot.bloom & bloom_bit(base)) hit = true;
    for (uint32_t i = 0; i < slot.base_count && !hit; ++i)
      hit = slot.bases[i] >= base && slot.bases[i] < end;
    if (hit) {
      slot.watched.store(true, std::memory_order_relaxed);
      set_interesting(slot, true);
    }
  }
  pthread_mutex_unlock(&mutex_);
}

bool GraphWatch::watch(uint64_t exec) {
  pthread_mutex_lock(&mutex_);
  Slot* slot = find(exec);
  const bool fresh = slot != nullptr && !slot->watched.exchange(true, std::memory_order_relaxed);
  if (slot != nullptr) set_interesting(*slot, true);
  pthread_mutex_unlock(&mutex_);
  return fresh;
}

bool GraphWatch::on_launch(uint64_t exec) {
  bool record = false;
  if (other_budget_.load(std::memory_order_relaxed) > 0) {
    if (exec != newest_.load(std::memory_order_relaxed)) {
      record = other_budget_.exchange(0, std::memory_order_relaxed) > 0;
    } else {
      other_budget_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  if (Slot* slot = find(exec)) {
    if (slot->watched.load(std::memory_order_relaxed)) {
      record = true;
    } else {
      const uint32_t n = slot->launches.fetch_add(1, std::memory_order_relaxed) + 1;
      record = record || n <= trace::kRecordedFirstLaunches;
      if (n >= trace::kRecordedFirstLaunches) {
        pthread_mutex_lock(&mutex_);
        if (slot->exec.load(std::memory_order_relaxed) == exec &&
            !slot->watched.load(std::memory_order_relaxed)) {
          set_interesting(*slot, false);
        }
        pthread_mutex_unlock(&mutex_);
      }
    }
  } else {
    record = record || overflow_watched_.load(std::memory_order_relaxed);
  }
  if (record) launches_pending_.fetch_add(1, std::memory_order_relaxed);
  return record;
}

bool GraphWatch::on_sync(int32_t result) {
  if (result != 0) return true;
  return launches_pending_.exchange(0, std::memory_order_relaxed) != 0;
}

}  // namespace capguard::interposer
