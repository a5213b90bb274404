#include "model/graph_lifetime.h"

#include <algorithm>

#include "trace/framework_memory.h"
#include "util/flat_map.h"

namespace capguard {

using trace::ApiEvent;
using trace::Field;

namespace {
std::string_view framework_owner(std::string_view api) {
  const trace::FrameworkMemoryInfo* info = trace::find_framework_memory(api);
  return info != nullptr ? info->owner : std::string_view();
}
}  // namespace

ExecState* GraphLifetime::exec(uint64_t handle) {
  auto it = execs_.find(handle);
  return it != execs_.end() ? &it->second : nullptr;
}

void GraphLifetime::feed(const ApiEvent& ev, const ApiInfo& api, GraphOp op,
                         const CaptureModel& model) {
  // A sticky error (a kernel faulted) surfaces at whatever call comes next.
  if (is_sticky_error(ev.result)) {
    sticky(ev, api);
    return;
  }
  if (api.kind == ApiKind::BeginCapture) {
    if (ev.result == 0 && ev.has(Field::Stream)) {
      begin_times_[ev.stream] = ev.time_ns;
      const bool known = std::any_of(open_captures_.begin(), open_captures_.end(),
                                     [&](const OpenCapture& c) { return c.tid == ev.tid; });
      if (!known && open_captures_.size() < 64) open_captures_.push_back({ev.tid, 0});
    }
    return;
  }
  if (api.kind == ApiKind::GraphInstantiate) {
    if (ev.result == 0 && ev.has(Field::GraphExec) && ev.graph_exec != 0) instantiate(ev);
    return;
  }
  if (api.kind == ApiKind::GraphLaunch) {
    if (ev.result == 0 && model.stream_capture(ev, api) == nullptr) launch(ev, api);
    return;
  }
  if (api.kind == ApiKind::StreamSync || api.kind == ApiKind::DeviceSync) {
    if (ev.result == 0) sync(ev, api);
    return;
  }
  if (op == GraphOp::None) return;
  if (op == GraphOp::ExecDestroy) {
    if (ev.result == 0 && ev.has(Field::GraphExec)) destroy(ev.graph_exec);
    return;
  }
  if (op == GraphOp::ExecUpdate) {
    update(ev);
    return;
  }
  if (op == GraphOp::ExecSetParams) {
    if (ev.result == 0 && ev.has(Field::GraphExec)) repoint(ev);
    return;
  }
  // What a capturing thread allocates while its capture is open is the graph's memory pool.
  if (ev.result == 0 && is_alloc(op) && ev.has(Field::Size) && !open_captures_.empty()) {
    for (OpenCapture& open : open_captures_)
      if (open.tid == ev.tid) open.bytes += ev.size;
  }
  // In a capture, stream-ordered allocations and frees become memory nodes of the graph.
  if (ev.result != 0 || !ev.has(Field::Pointer) || ev.pointer == 0) return;
  if (op == GraphOp::FrameworkFree || op == GraphOp::FrameworkAlloc) return framework_block(ev, op);
  if (model.stream_capture(ev, api) != nullptr) return;
  if (is_alloc(op)) {
    allocate(ev, op);
  } else {
    release(ev, op);
  }
}

void GraphLifetime::allocate(const ApiEvent& ev, GraphOp op) {
  MemoryBlock block;
  block.base = ev.pointer;
  block.size = ev.has(Field::Size) ? ev.size : 0;
  block.host = op == GraphOp::AllocHost;
  block.alloc = Site::of(ev);
  block.in_capture = std::any_of(open_captures_.begin(), open_captures_.end(),
                                 [&](const OpenCapture& c) { return c.tid == ev.tid; });
  mark_reused(block);
  if (blocks_.size() >= kMaxLiveBlocks && !blocks_.contains(block.base)) return;
  blocks_[block.base] = block;
}

// An address an exec still holds, freed earlier, now belongs to this allocation. True when
// one did.
bool GraphLifetime::mark_reused(const MemoryBlock& block) {
  const uint64_t end = block.base + std::max<uint64_t>(block.size, 1);
  bool any = false;
  for (auto it = unreused_hits_.lower_bound(block.base);
       it != unreused_hits_.end() && it->first < end;) {
    GraphHit* hit = find_hit(it->second.first, it->second.second);
    it = unreused_hits_.erase(it);
    if (hit != nullptr && !hit->reused_by) hit->reused_by = block, any = true;
  }
  return any;
}

// The block stays inside CUDA's allocation (blocks_ keeps that). Given back, the program's next
// tensor may get it: to an exec that holds an address in it, this is a free. Handed out, it is
// the new owner of the addresses freed earlier.
void GraphLifetime::framework_block(const ApiEvent& ev, GraphOp op) {
  MemoryBlock block;
  block.base = ev.pointer;
  block.size = ev.has(Field::Size) ? ev.size : 0;
  block.owner = framework_owner(ev.api);
  const Site site = Site::of(ev);
  bool held = false;
  if (op == GraphOp::FrameworkFree) {
    held = hit_execs(block, &site);
  } else {
    block.alloc = site;
    held = mark_reused(block) || hit_execs(block, nullptr);
  }
  if (!held) ++unheld_framework_events_;
}

void GraphLifetime::release(const ApiEvent& ev, GraphOp op) {
  MemoryBlock block;
  if (op == GraphOp::Unmap) {
    block.base = ev.pointer;
    block.size = ev.has(Field::Size) ? ev.size : 0;
    // Every mapping inside the range goes.
    auto it = blocks_.lower_bound(block.base);
    while (it != blocks_.end() && it->first < block.base + std::max<uint64_t>(block.size, 1)) {
      if (!block.alloc.known) block.alloc = it->second.alloc;
      it = blocks_.erase(it);
    }
  } else {
    auto it = blocks_.find(ev.pointer);
    if (it != blocks_.end()) {
      block = it->second;
      blocks_.erase(it);
    } else {
      block.base = ev.pointer;
      block.host = op == GraphOp::FreeHost;
    }
    if (ev.has(Field::Size) && ev.size != 0) block.size = ev.size;
  }
  const Site free_site = Site::of(ev);
  hit_execs(block, &free_site);
}

// Each live exec holding an address in the block gets a hit (`free_site` set): its next launch
// replays it. True when one held an address there; without `free_site`, only that is asked.
bool GraphLifetime::hit_execs(const MemoryBlock& block, const Site* free_site) {
  bool held = false;
  const uint64_t end = block.base + std::max<uint64_t>(block.size, 1);
  for (auto& [handle, state] : execs_) {
    if (state.refs.empty() || state.all_dropped) continue;
    if (state.refs.size() > 2 * state.indexed_refs + 1024) {  // refs come with the walk only
      state.refs_by_address.clear();
      state.refs_by_address.reserve(state.refs.size());
      for (uint32_t i = 0; i < state.refs.size(); ++i)
        state.refs_by_address.emplace_back(state.refs[i].address, i);
      std::sort(state.refs_by_address.begin(), state.refs_by_address.end());
      state.indexed_refs = state.refs.size();
    }
    // One hit per exec and block: the first node (in walk order) that holds it; the refs
    // added since the index was built come after every indexed one.
    uint32_t first = UINT32_MAX;
    for (auto it = std::lower_bound(state.refs_by_address.begin(), state.refs_by_address.end(),
                                    std::pair<uint64_t, uint32_t>{block.base, 0});
         it != state.refs_by_address.end() && it->first < end; ++it)
      if (it->second < first && !state.ref_dropped(state.refs[it->second])) first = it->second;
    for (size_t i = state.indexed_refs; first == UINT32_MAX && i < state.refs.size(); ++i)
      if (block.contains(state.refs[i].address) && !state.ref_dropped(state.refs[i]))
        first = static_cast<uint32_t>(i);
    if (first == UINT32_MAX) continue;
    held = true;
    if (free_site == nullptr) return true;
    // A hit of this very free (the same event fed twice) would be the last one added.
    if (!state.hits.empty() && state.hits.back().block.base == block.base &&
        state.hits.back().free.seq == free_site->seq)
      continue;
    if (state.hits.size() >= kMaxHitsPerExec) {  // a flood of frees: the first ones tell
      ++state.hits_not_kept;
      continue;
    }
    add_hit(state, state.refs[first], block, *free_site);
  }
  return held;
}

GraphHit* GraphLifetime::find_hit(uint64_t handle, uint64_t id) {
  ExecState* state = exec(handle);
  if (state == nullptr) return nullptr;
  const auto hit = std::lower_bound(state->hits.begin(), state->hits.end(), id,
                                    [](const GraphHit& h, uint64_t v) { return h.id < v; });
  return hit != state->hits.end() && hit->id == id ? &*hit : nullptr;
}

void GraphLifetime::add_hit(ExecState& state, const NodeRef& ref, const MemoryBlock& block,
                            const Site& free) {
  const uint64_t id = state.next_hit_id++;
  state.hits.push_back({id, ref, block, free, std::nullopt});
  ++state.hit_nodes[ref.node];
  unreused_hits_.emplace(ref.address, std::pair<uint64_t, uint64_t>{state.handle, id});
  if (unreused_hits_.size() < purge_unreused_at_) return;
  std::erase_if(unreused_hits_, [&](const auto& entry) {
    const GraphHit* hit = find_hit(entry.second.first, entry.second.second);
    return hit == nullptr || hit->reused_by;
  });
  purge_unreused_at_ = std::max<size_t>(4096, 2 * unreused_hits_.size());
}

// The hits on nodes first..last, gone with their addresses (their index entries are skipped).
void GraphLifetime::erase_hits(ExecState& state, uint32_t first, uint32_t last) {
  const auto on = state.hit_nodes.lower_bound(first);
  if (on == state.hit_nodes.end() || on->first > last) return;  // none: no scan of the hits
  std::erase_if(state.hits,
                [&](const GraphHit& hit) { return hit.ref.node >= first && hit.ref.node <= last; });
  state.hit_nodes.erase(on, state.hit_nodes.upper_bound(last));
}

// The exec holds no addresses any more (an update: it is walked again).
void GraphLifetime::clear_refs(ExecState& state) {
  total_refs_ -= std::min(total_refs_, state.refs.size() - state.dropped_refs);
  state.refs.clear();
  state.refs_by_address.clear();
  state.indexed_refs = 0;
  state.all_dropped = false;
  state.dropped_refs = 0;
  state.hits.clear();
  state.hits_not_kept = 0;
  state.hit_nodes.clear();
}

void GraphLifetime::instantiate(const ApiEvent& ev) {
  if (ExecState* old = exec(ev.graph_exec)) destroy(old->handle);  // a handle CUDA reused
  if (execs_.size() >= kMaxLiveExecs) return;
  ExecState& state = execs_[ev.graph_exec];
  state.handle = ev.graph_exec;
  state.serial = next_serial_++;
  state.graph = ev.has(Field::Graph) ? ev.graph : 0;
  state.instantiate = Site::of(ev);
  state.instantiate_time = ev.time_ns;
  if (auto it = graphs_.find(state.graph); it != graphs_.end()) {
    state.capture = it->second.capture;
    state.capture_begin_time = it->second.begin_time;
    state.pool_bytes = it->second.pool_bytes;
  }
  lifecycle_.on_instantiate(state);
}

void GraphLifetime::on_end_capture(const ApiEvent& ev, const Capture& capture) {
  if (ev.result != 0 || !ev.has(Field::Graph) || ev.graph == 0) return;
  if (graphs_.size() >= kMaxGraphs && !graphs_.contains(ev.graph)) {
    graphs_.erase(graph_order_.front());  // the oldest graph: long since instantiated
    graph_order_.pop_front();
  }
  auto [slot, fresh] = graphs_.try_emplace(ev.graph);
  if (fresh) graph_order_.push_back(ev.graph);
  CaptureOfGraph& entry = slot->second;
  // A copy without its streams: the model retires the capture into the report as it ends.
  // (for_overwrite: its member initializers, not a zeroing of the whole object first.)
  auto copy = std::make_shared_for_overwrite<Capture>();
  static_cast<CaptureHead&>(*copy) = capture;
  entry.capture = std::move(copy);
  auto it = begin_times_.find(capture.origin.handle);
  entry.begin_time = it != begin_times_.end() ? it->second : 0;
  entry.pool_bytes = 0;
  for (auto open = open_captures_.begin(); open != open_captures_.end(); ++open) {
    if (open->tid != ev.tid) continue;
    entry.pool_bytes = open->bytes;
    open_captures_.erase(open);
    break;
  }
}

void GraphLifetime::on_graph_node(const trace::GraphNodeRecord& record) {
  ExecState* state = exec(record.exec);
  if (state == nullptr || state->walked) return;  // a walk without its instantiate: ignored
  if (record.index >= state->nodes.size()) {
    if (state->nodes_cut || (record.index == state->nodes.size() &&
                             total_nodes_ >= kMaxNodesPerProcess)) {  // the rest is not kept
      state->nodes_cut = true;
      ++nodes_not_kept_;
      return;
    }
    if (record.index != state->nodes.size()) return;  // a gap: the trace is damaged
    state->nodes.push_back({kernel_name(record.name), record.scalar_hash, record.type, record.depth,
                            0, record.has_scalars, false});
    ++total_nodes_;
    // The key (graph_lifecycle.h) takes each node's geometry in walk order.
    uint64_t g = mix_hash(state->geometry_hash ^ (uint64_t{record.index} << 8 | record.type));
    for (uint32_t i = 0; i < record.geometry_count; ++i) g = mix_hash(g ^ record.geometry[i]);
    state->geometry_hash = g;
  }
  for (const trace::GraphRef& ref : record.refs) {
    if (total_refs_ >= kMaxRefsPerProcess) break;
    state->refs.push_back({record.index, ref.role, ref.index, ref.address});
    ++state->nodes[record.index].refs;
    ++total_refs_;
  }
}

void GraphLifetime::on_graph(const trace::GraphRecord& record) {
  ExecState* state = exec(record.exec);
  if (state == nullptr || state->walked) return;
  state->walked = true;
  state->topology_hash = record.topology_hash;
  if (state->all_dropped || state->dropped_refs != 0) {  // repointed while walked: as before
    std::erase_if(state->refs, [&](const NodeRef& ref) { return state->ref_dropped(ref); });
    state->dropped_refs = 0;
    state->all_dropped = false;
    for (GraphNodeInfo& node : state->nodes) node.refs = node.dropped ? 0 : node.refs;
    state->refs_by_address.clear();  // positions moved
    state->indexed_refs = 0;
  }
  if (state->rewalk) {  // after an update: the same exec, refreshed in place
    state->rewalk = false;
    return;
  }
  lifecycle_.on_walked(*state, record.topology_hash, record.complete && !state->nodes_cut);
}

std::string_view GraphLifetime::kernel_name(std::string_view name) {
  if (name.empty()) return {};
  if (auto it = kernel_names_.find(std::string(name)); it != kernel_names_.end()) return *it;
  if (kernel_names_.size() >= kMaxKernelNames) {
    ++kernel_names_not_kept_;
    return {};
  }
  return *kernel_names_.emplace(name).first;
}

void GraphLifetime::destroy(uint64_t handle) {
  auto it = execs_.find(handle);
  if (it == execs_.end()) return;
  total_nodes_ -= std::min(total_nodes_, it->second.nodes.size());
  node_args_facts(it->second);
  lifecycle_.on_destroy(it->second);
  total_refs_ -= std::min(total_refs_, it->second.refs.size() - it->second.dropped_refs);
  for (auto& [stream, list] : in_flight_)
    list.erase(std::remove(list.begin(), list.end(), handle), list.end());
  execs_.erase(it);
}

void GraphLifetime::launch(const ApiEvent& ev, const ApiInfo& api) {
  ExecState* state = exec(ev.has(Field::GraphExec) ? ev.graph_exec : 0);
  if (state == nullptr) return;
  ++state->launches;
  lifecycle_.on_launch(*state);
  state->last_launch = Site::of(ev);
  const uint64_t raw_stream = ev.has(Field::Stream) ? ev.stream : 0;
  const uint64_t stream = api.per_thread && raw_stream == 0 ? trace::kStreamPerThread : raw_stream;
  state->last_stream = stream;
  std::vector<uint64_t>& list = in_flight_[stream];
  if (std::find(list.begin(), list.end(), state->handle) == list.end())
    list.push_back(state->handle);
  if (state->hits.empty()) return;
  if (state->replay_after_free) {
    consequences_.push_back({*state->replay_after_free, 1});
    return;
  }
  GraphFacts facts;
  facts.kind = GraphFactKind::ReplayAfterFree;
  facts.ev = &ev;
  facts.where = Site::of(ev);
  facts.exec = state;
  facts.hit = &state->hits.front();
  facts.more_hits = state->hits.size() - 1 + state->hits_not_kept;
  facts_.push_back(std::move(facts));
}

void GraphLifetime::sync(const ApiEvent& ev, const ApiInfo& api) {
  if (api.kind == ApiKind::DeviceSync) {
    in_flight_.clear();
  } else if (ev.has(Field::Stream)) {
    in_flight_.erase(api.per_thread && ev.stream == 0 ? trace::kStreamPerThread : ev.stream);
  }
}

void GraphLifetime::sticky(const ApiEvent& ev, const ApiInfo& api) {
  if (sticky_seen_) {
    if (sticky_finding_) consequences_.push_back({*sticky_finding_, 1});
    return;
  }
  sticky_seen_ = true;
  GraphFacts facts;
  facts.kind = GraphFactKind::ReplayFailed;
  facts.ev = &ev;
  facts.where = Site::of(ev);
  const bool one_stream = api.kind == ApiKind::StreamSync && ev.has(Field::Stream);
  const uint64_t stream = api.per_thread && ev.stream == 0 ? trace::kStreamPerThread : ev.stream;
  for (const auto& [s, list] : in_flight_) {
    if (one_stream && s != stream) continue;
    for (uint64_t handle : list)
      if (const ExecState* state = exec(handle)) facts.in_flight.push_back(state);
  }
  // Execs past their recorded launches may have been replaying unseen.
  for (const auto& [handle, state] : execs_) {
    if (state.launches < trace::kRecordedFirstLaunches) continue;
    if (one_stream && state.last_stream != stream) continue;  // replayed on another stream
    if (std::find(facts.in_flight.begin(), facts.in_flight.end(), &state) != facts.in_flight.end())
      continue;
    facts.maybe_in_flight.push_back(&state);
  }
  if (facts.in_flight.empty() && facts.maybe_in_flight.empty()) return;  // no graph to blame
  auto by_serial = [](const ExecState* a, const ExecState* b) { return a->serial < b->serial; };
  std::sort(facts.in_flight.begin(), facts.in_flight.end(), by_serial);
  std::sort(facts.maybe_in_flight.begin(), facts.maybe_in_flight.end(), by_serial);
  facts_.push_back(std::move(facts));
}

void GraphLifetime::update(const ApiEvent& ev) {
  const uint64_t handle = ev.has(Field::GraphExec) ? ev.graph_exec : 0;
  if (ev.result == 0) {
    // The exec now holds the new graph's addresses; the interposer walks it again.
    if (ExecState* state = exec(handle)) {
      clear_refs(*state);
      total_nodes_ -= std::min(total_nodes_, state->nodes.size());
      state->nodes.clear();
      state->nodes_cut = false;
      state->replay_after_free.reset();
      state->walked = false;
      state->rewalk = true;
      state->geometry_hash = 0;
      state->updated = true;  // its arguments are refreshed whenever it is updated
      lifecycle_.on_updated(*state);
    }
    return;
  }
  if (updates_.size() >= kMaxGraphs) return;  // details that never come: a damaged trace
  PendingUpdate& pending = updates_[ev.seq];
  pending.copy = ev;
  pending.where = Site::of(ev);
  pending.exec = handle;
  pending.graph = ev.has(Field::Graph) ? ev.graph : 0;
}

void GraphLifetime::repoint(const ApiEvent& ev) {
  ExecState* state = exec(ev.graph_exec);
  if (state == nullptr) return;
  // The node's old addresses are no longer the exec's; its new ones are unknown (an exec's
  // parameters cannot be read back). A child graph node takes its whole subtree with it. With
  // no index (the interposer did not find the node), every address of the exec goes.
  lifecycle_.on_updated(*state);
  // Marked, not erased: the node's refs are skipped from now on, and the count of live refs
  // goes down by theirs. A subtree whose root is marked was marked whole (its hits erased).
  if (state->all_dropped) return;
  uint32_t first = 0, last = UINT32_MAX;
  if (ev.has(Field::NodeIndex)) {
    first = last = ev.node_index;
    if (first >= state->nodes.size() || state->nodes[first].dropped) return;
    const uint32_t depth = state->nodes[first].depth;
    while (last + 1 < state->nodes.size() && state->nodes[last + 1].depth > depth) ++last;
  }
  if (!ev.has(Field::NodeIndex)) {
    state->all_dropped = true;
    total_refs_ -= std::min(total_refs_, state->refs.size() - state->dropped_refs);
    state->dropped_refs = state->refs.size();
  } else {
    for (uint32_t n = first; n <= last; ++n) {
      GraphNodeInfo& node = state->nodes[n];
      if (node.dropped) continue;
      node.dropped = true;
      total_refs_ -= std::min<size_t>(total_refs_, node.refs);
      state->dropped_refs += node.refs;
    }
  }
  erase_hits(*state, first, last);
}

// What a rejected update's event says, before (or without) its details record.
GraphFacts GraphLifetime::rejected_update(PendingUpdate& pending) {
  GraphFacts facts;
  facts.kind = GraphFactKind::UpdateRejected;
  facts.ev = &pending.copy;
  facts.where = pending.where;
  facts.exec = exec(pending.exec);
  facts.update_graph = pending.graph;
  if (auto g = graphs_.find(pending.graph); g != graphs_.end())
    facts.update_capture = g->second.capture.get();
  return facts;
}

void GraphLifetime::on_graph_update(const trace::GraphUpdateRecord& record) {
  auto it = updates_.find(record.seq);
  if (it == updates_.end()) return;
  PendingUpdate& pending = it->second;
  GraphFacts facts = rejected_update(pending);
  facts.update_result = record.result;
  facts.error_type = record.error_type;
  facts.error_name = std::string(record.name);
  facts.details_known = true;
  facts_.push_back(std::move(facts));
  // The record is consumed right after this (the replay emits before the next record).
  kept_update_ = std::move(pending);
  updates_.erase(it);
  facts_.back().ev = &kept_update_.copy;
}

void GraphLifetime::finish() {
  for (auto& [seq, pending] : updates_)  // rejected updates whose details never came
    facts_.push_back(rejected_update(pending));
  std::vector<const ExecState*> live;
  live.reserve(execs_.size());
  for (const auto& [handle, state] : execs_) {
    live.push_back(&state);
    node_args_facts(state);
  }
  lifecycle_.finish(live);
  held_ = held_memory_by_site(live, blocks_, lifecycle_.sites().size(),
                              [this](uint32_t stack) { return lifecycle_.stack_key(stack); });
  const std::vector<ChurnFacts>& churn = lifecycle_.churn();
  for (size_t i = 0; i < churn.size(); ++i) {
    GraphFacts facts;
    facts.kind = GraphFactKind::KeyRecaptured;
    facts.churn = &churn[i];
    facts.lifecycle_site = lifecycle_.churn_sites()[i];
    facts.where = churn[i].last_capture ? churn[i].last_capture->begin : churn[i].last_instantiate;
    facts_.push_back(std::move(facts));
  }
  for (const auto& [site, growth] : lifecycle_.growth()) {
    GraphFacts facts;
    facts.kind = GraphFactKind::KeysAddedLate;
    facts.growth = &growth;
    facts.lifecycle_site = site;
    facts.where = growth.last_capture ? growth.last_capture->begin : growth.last_instantiate;
    facts_.push_back(std::move(facts));
  }
}

void GraphLifetime::reported(const GraphFacts& facts, size_t finding) {
  if (facts.kind == GraphFactKind::ReplayAfterFree && facts.exec != nullptr) {
    if (ExecState* state = exec(facts.exec->handle)) state->replay_after_free = finding;
  } else if (facts.kind == GraphFactKind::ReplayFailed) {
    sticky_finding_ = finding;
  }
}

}  // namespace capguard
