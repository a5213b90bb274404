#include "model/graph_lifecycle.h"

#include <algorithm>

#include "model/graph_lifetime.h"
#include "util/flat_map.h"

namespace capguard {
namespace {

uint64_t ref_key(const NodeRef& ref) {
  return uint64_t{ref.node} << 32 | uint64_t{static_cast<uint8_t>(ref.role)} << 24 |
         (ref.index & 0xffffff);
}

uint64_t cost_of(const ExecState& exec) {
  if (exec.capture_begin_time == 0 || exec.instantiate_time <= exec.capture_begin_time) return 0;
  return exec.instantiate_time - exec.capture_begin_time;
}

// An exec's refs as (ref_key, address), ordered by node, role and index (a memcpy lists its
// source before its destination; words of one struct argument keep their order).
std::vector<std::pair<uint64_t, uint64_t>> sorted_refs(const ExecState& exec) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  const size_t n = std::min(exec.refs.size(), GraphLifecycle::kMaxSignatureRefs);
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.emplace_back(ref_key(exec.refs[i]), exec.refs[i].address);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace

bool GraphLifecycle::replayed_since(const SiteState& site) const {
  if (site.newest_launches >= 2) return true;  // served, not just checked once
  if (last_launch_.at > site.walked_at && last_launch_.serial != site.last_walked_serial)
    return true;
  // The latest launch was of the site's last capture: was there one of another exec before it?
  return last_other_launch_.at > site.walked_at;
}

GraphLifecycle::SiteState* GraphLifecycle::site_of(const ExecState& exec) {
  return exec.lifecycle_site < sites_.size() ? &sites_[exec.lifecycle_site] : nullptr;
}

void GraphLifecycle::on_instantiate(ExecState& exec) {
  const bool captured = exec.capture != nullptr && exec.capture->begin.stack != 0;
  const Site& where = captured ? exec.capture->begin : exec.instantiate;
  if (where.stack == 0) return;  // no stack: no site to count it under
  const uint32_t stack =
      site_key_ != nullptr ? site_key_(site_key_context_, where.stack) : where.stack;
  const uint64_t site_key = uint64_t{stack} << 1 | (captured ? 1 : 0);
  size_t index = 0;
  if (const size_t* known = site_index_.find(site_key)) {
    index = *known;
  } else {
    if (sites_.size() >= kMaxSites) return;
    index = sites_.size();
    site_index_[site_key] = index;
    SiteState& fresh = sites_.emplace_back();
    fresh.stack = stack;
    fresh.summary.captured = captured;
  }
  auto it = sites_.begin() + static_cast<ptrdiff_t>(index);
  it->summary.site = where;  // the newest capture of the site stands for it
  ++it->summary.graphs;
  it->summary.capture_ns += cost_of(exec);
  it->summary.pool_bytes += exec.pool_bytes;
  ++it->live;
  exec.lifecycle_site = static_cast<size_t>(it - sites_.begin());
}

void GraphLifecycle::remember(KeyState& key, const ExecState& exec) {
  key.last_serial = exec.serial;
  key.last_destroy_lone = false;
  key.last_launches = 0;
  Signature& sig = key.signature;
  signature_entries_ -= std::min(signature_entries_, sig.scalars.size() + sig.refs.size());
  sig = Signature{};
  // Bounded over all keys: a trace of many huge graphs keeps no copy to compare, and says so.
  const size_t wanted = exec.nodes.size() + std::min(exec.refs.size(), kMaxSignatureRefs);
  if (signature_entries_ + wanted > kMaxSignatureEntries) return;
  sig.kept = true;
  for (uint32_t i = 0; i < exec.nodes.size(); ++i)
    if (exec.nodes[i].has_scalars) sig.scalars.emplace_back(i, exec.nodes[i].scalar_hash);
  for (const auto& [key_of_ref, address] : sorted_refs(exec)) {
    sig.refs.push_back(key_of_ref);
    sig.addresses.push_back(address);
  }
  signature_entries_ += sig.scalars.size() + sig.refs.size();
}

void GraphLifecycle::diff(const Signature& before, const ExecState& after, CaptureDiff& out) const {
  if (!before.kept) {
    ++out.unknown;
    return;
  }
  bool moved = false;
  bool scalar = false;
  // Scalars: node by node (the key is the same, so the nodes are too).
  size_t s = 0;
  for (uint32_t i = 0; i < after.nodes.size(); ++i) {
    if (!after.nodes[i].has_scalars) continue;
    while (s < before.scalars.size() && before.scalars[s].first < i) ++s;
    const bool differs = s >= before.scalars.size() || before.scalars[s].first != i ||
                         before.scalars[s].second != after.nodes[i].scalar_hash;
    if (differs && !scalar) {
      scalar = true;
      if (out.scalar_kernel.empty()) out.scalar_kernel = after.nodes[i].name;
    }
  }
  // Addresses: the refs of both, by node, role and index; one missing on either side moved too.
  const std::vector<std::pair<uint64_t, uint64_t>> refs = sorted_refs(after);
  size_t b = 0;
  for (const auto& [key, address] : refs) {
    while (b < before.refs.size() && before.refs[b] < key) ++b;
    const bool same_slot = b < before.refs.size() && before.refs[b] == key;
    const bool same = same_slot && before.addresses[b] == address;
    if (same_slot) ++b;
    if (same) continue;
    moved = true;
    const uint32_t node = static_cast<uint32_t>(key >> 32);
    const CaptureDiff::Argument argument{
        std::string(node < after.nodes.size() ? after.nodes[node].name : std::string_view()),
        static_cast<char>((key >> 24) & 0xff), static_cast<uint32_t>(key & 0xffffff)};
    const bool listed = std::any_of(out.moved.begin(), out.moved.end(), [&](const auto& m) {
      return m.role == argument.role && m.index == argument.index && m.kernel == argument.kernel;
    });
    if (!listed && out.moved.size() < 3) out.moved.push_back(argument);
  }
  if (before.refs.size() != refs.size()) moved = true;  // a ref one of them has, the other not
  if (scalar) {
    ++out.scalars;
  } else if (moved) {
    ++out.addresses;
  } else {
    ++out.identical;
  }
}

void GraphLifecycle::on_walked(ExecState& exec, uint64_t topology_hash, bool complete) {
  SiteState* site = site_of(exec);
  if (site == nullptr) return;
  close_batch(*site);
  if (!complete) return;  // a walk cut short at its bounds: no key to judge by
  const uint64_t shape = mix_hash(topology_hash ^ mix_hash(exec.geometry_hash));
  const uint64_t lookup = mix_hash(shape ^ mix_hash(exec.lifecycle_site));
  size_t key_index = SIZE_MAX;
  const size_t* known = key_index_.find(lookup);
  if (known != nullptr && keys_[*known].shape == shape &&
      keys_[*known].site == exec.lifecycle_site) {
    key_index = *known;
  } else if (known != nullptr) {  // two (site, shape) pairs share a hash: look at the site's keys
    for (size_t k : site->keys)
      if (keys_[k].shape == shape) key_index = k;
  }
  const bool fresh = key_index == SIZE_MAX;
  if (fresh) {
    if (keys_.size() >= kMaxKeys || site->keys.size() >= kMaxKeysPerSite) {
      site->growth.keys_at_least = true;
      return;
    }
    key_index = keys_.size();
    if (known == nullptr) key_index_[lookup] = key_index;  // the first of a hash keeps it
    KeyState& key = keys_.emplace_back();
    key.shape = shape;
    key.topology = topology_hash;
    key.site = exec.lifecycle_site;
    const bool known_topology = std::find(site->topologies.begin(), site->topologies.end(),
                                          topology_hash) != site->topologies.end();
    if (!known_topology) site->topologies.push_back(topology_hash);
    // Growth: a new key captured after the site's other execs replayed, while one of them
    // still lives (this exec is counted in `live` already).
    if (!site->keys.empty() && replayed_since(*site) && site->live > 1) {
      GrowthFacts& g = site->growth;
      ++g.late_keys;
      if (known_topology) ++g.late_resized;
      g.late_cost_ns += cost_of(exec);
      g.last_capture = exec.capture;
      g.last_instantiate = exec.instantiate;
      if (site->late.size() < kGrowthListed) site->late.push_back(key_index);
    }
    site->keys.push_back(key_index);
  }
  KeyState& key = keys_[key_index];
  exec.lifecycle_key = key_index;
  ++key.captures;
  key.cost_ns += cost_of(exec);
  key.churn.nodes = static_cast<uint32_t>(exec.nodes.size());
  // Churn: the key's previous exec was the site's last capture and was hardly used. Decided now
  // when it is gone already, else when it goes (close_batch); a launch of it calls it off.
  const bool replaced_last = !fresh && key.last_capture_index == site->capture_index;
  const bool used_since = key.last_launches > 0 || replayed_since(*site);
  if (replaced_last && key.last_launches <= kChurnMaxLaunches &&
      (key.last_exec == nullptr || used_since)) {
    auto step = std::make_unique<ChurnFacts>();
    step->step_launches = key.last_launches;
    diff(key.signature, exec, step->diff);
    step->last_capture = exec.capture;
    step->last_instantiate = exec.instantiate;
    if (key.last_exec == nullptr) {
      if (key.last_destroy_lone) commit_step(key, *step);
    } else if (key.last_exec != nullptr) {
      key.last_exec->pending_step = std::move(step);
    }
  }
  ++site->capture_index;
  key.last_capture_index = site->capture_index;
  remember(key, exec);
  key.last_exec = &exec;
  site->last_walked_serial = exec.serial;
  site->walked_at = ++clock_;
  site->newest_launches = 0;
}

void GraphLifecycle::on_launch(ExecState& exec) {
  ++clock_;
  if (exec.serial != last_launch_.serial) last_other_launch_ = last_launch_;
  last_launch_ = {clock_, exec.serial};
  SiteState* site = site_of(exec);
  if (site == nullptr) return;
  close_batch(*site);
  ++site->summary.launches;
  if (exec.serial == site->last_walked_serial) ++site->newest_launches;
  if (exec.launches >= trace::kRecordedFirstLaunches) site->summary.launches_at_least = true;
  exec.pending_step.reset();  // launched again after its re-capture: kept, not replaced
  if (exec.lifecycle_key >= keys_.size()) return;
  KeyState& key = keys_[exec.lifecycle_key];
  ++key.launches;
  if (exec.launches >= trace::kRecordedFirstLaunches) key.launches_at_least = true;
  if (key.last_serial == exec.serial) key.last_launches = exec.launches;
}

void GraphLifecycle::on_destroy(ExecState& exec) {
  SiteState* site = site_of(exec);
  if (site == nullptr) return;
  if (site->live > 0) --site->live;
  ++site->batch_size;
  if (exec.lifecycle_key < keys_.size()) {
    KeyState& key = keys_[exec.lifecycle_key];
    if (key.last_serial == exec.serial) {
      key.last_exec = nullptr;
      site->batch_keys.push_back(exec.lifecycle_key);
    }
    if (exec.pending_step) site->batch_steps.emplace_back(exec.lifecycle_key, *exec.pending_step);
  }
  exec.pending_step.reset();
}

void GraphLifecycle::on_updated(ExecState& exec) {
  if (SiteState* site = site_of(exec)) ++site->summary.updates;
  exec.pending_step.reset();  // refreshed in place: it lives on
}

void GraphLifecycle::close_batch(SiteState& site) {
  if (site.batch_size == 0) return;
  const bool lone = site.batch_size == 1;
  for (size_t k : site.batch_keys) keys_[k].last_destroy_lone = lone;
  if (lone)
    for (auto& [k, step] : site.batch_steps) commit_step(keys_[k], step);
  site.batch_size = 0;
  site.batch_keys.clear();
  site.batch_steps.clear();
}

void GraphLifecycle::commit_step(KeyState& key, const ChurnFacts& step) {
  ChurnFacts& c = key.churn;
  ++c.steps;
  c.step_launches += step.step_launches;
  c.diff.identical += step.diff.identical;
  c.diff.addresses += step.diff.addresses;
  c.diff.scalars += step.diff.scalars;
  c.diff.unknown += step.diff.unknown;
  for (const CaptureDiff::Argument& m : step.diff.moved) {
    const bool listed = std::any_of(c.diff.moved.begin(), c.diff.moved.end(), [&](const auto& o) {
      return o.kernel == m.kernel && o.role == m.role && o.index == m.index;
    });
    if (!listed && c.diff.moved.size() < 3) c.diff.moved.push_back(m);
  }
  if (c.diff.scalar_kernel.empty()) c.diff.scalar_kernel = step.diff.scalar_kernel;
  c.last_capture = step.last_capture;
  c.last_instantiate = step.last_instantiate;
}

void GraphLifecycle::finish(const std::vector<const ExecState*>& live) {
  for (SiteState& site : sites_) close_batch(site);
  for (const ExecState* exec : live)
    if (exec->lifecycle_site < sites_.size()) ++sites_[exec->lifecycle_site].summary.alive;
  for (size_t s = 0; s < sites_.size(); ++s) {
    SiteState& site = sites_[s];
    site.summary.keys = static_cast<uint32_t>(site.keys.size());
    site.summary.topologies = static_cast<uint32_t>(site.topologies.size());
    summaries_.push_back(site.summary);
    for (size_t k : site.keys) {
      KeyState& key = keys_[k];
      if (key.churn.steps == 0) continue;
      key.churn.captures = key.captures;
      key.churn.launches = key.launches;
      key.churn.cost_ns = key.cost_ns;
      churn_.push_back(std::move(key.churn));
      churn_sites_.push_back(s);
    }
    GrowthFacts& g = site.growth;
    if (g.late_keys == 0) continue;
    g.keys = site.summary.keys;
    g.topologies = site.summary.topologies;
    for (size_t k : site.late)
      g.late_launches.emplace_back(keys_[k].launches, keys_[k].launches_at_least);
    growth_.emplace_back(s, std::move(g));
  }
}

}  // namespace capguard
