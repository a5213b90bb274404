// Graph lifetime: what happens to instantiated graphs after their capture. Replayed
// from the trace beside the capture model: live allocations and frees, the addresses each exec's
// nodes hold (graph records, format.h v3), its launches, the syncs where a sticky error
// surfaces, and rejected updates. It concludes facts (GraphFacts); the graph rules (rules/
// replay_after_free.cpp, graph_replay_failed.cpp, graph_rebuilt_every_step.cpp,
// graph_update_rejected.cpp) word them, and the replay turns them into findings.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "model/api_catalog.h"
#include "model/capture_model.h"
#include "model/graph_api.h"
#include "model/graph_held_memory.h"
#include "model/graph_lifecycle.h"
#include "model/node_args.h"
#include "trace/event.h"
#include "trace/graph_record.h"

namespace capguard {

struct MemoryBlock {
  uint64_t base = 0;
  uint64_t size = 0;  // 0 when unknown: then only the base address is matched
  bool host = false;
  Site alloc;  // alloc.known false: allocated before the trace began
  // A framework allocator's block inside CUDA's allocation (trace/framework_memory.def: "PyTorch's
  // CUDA caching allocator"); empty for CUDA's own allocations.
  std::string_view owner;
  bool in_capture = false;  // allocated by a capturing thread while its capture was open
  bool contains(uint64_t address) const {
    return address >= base && address < base + (size != 0 ? size : 1);
  }
};

// 40 bytes a node, its kernel's name kept once per process (GraphLifetime's kernel names): a
// graph of 10M nodes took 1.6 GB as 128 bytes and a string each, now at most
// kMaxNodesPerProcess are kept.
struct GraphNodeInfo {
  std::string_view name;  // kernel name (GraphLifetime keeps it); empty otherwise
  uint64_t scalar_hash = 0;
  uint32_t type = 0;
  uint32_t depth = 0;
  uint32_t refs = 0;         // ExecState::refs of this node
  bool has_scalars = false;  // v4 traces: a hash of its non-address kernel arguments
  bool dropped = false;      // repointed (…NodeSetParams): its refs no longer count
};

struct NodeRef {
  uint32_t node = 0;  // index into ExecState::nodes
  char role = 'a';    // 'a' kernel argument, 's' copy source, 'd' destination
  uint32_t index = 0;
  uint64_t address = 0;
};

struct GraphHit {   // a free that hit an address an exec's node holds
  uint64_t id = 0;  // ascending in ExecState::hits
  NodeRef ref;
  MemoryBlock block;
  Site free;
  std::optional<MemoryBlock> reused_by;  // a later allocation over the same address
};

struct ExecState {
  uint64_t handle = 0;
  uint32_t serial = 0;  // 1-based, per process, in instantiate order
  uint64_t graph = 0;
  Site instantiate;
  uint64_t instantiate_time = 0;
  // The capture that made its graph, when known: a copy taken as it ended (the model retires
  // captures into the report as they end, graph_lifetime outlives them).
  std::shared_ptr<const Capture> capture;
  uint64_t capture_begin_time = 0;
  std::vector<GraphNodeInfo> nodes;
  // Its node references, in walk order. A repointed node's stay here, marked by the node
  // (GraphNodeInfo::dropped, or all_dropped): a …NodeSetParams is then not a scan of them all
  // (4M refs and 20k calls took over 60 s); refs_by_address finds a free's (sorted
  // by address, then position): the first indexed_refs refs, built again when twice as many).
  std::vector<NodeRef> refs;
  bool all_dropped = false;
  size_t dropped_refs = 0;
  std::vector<std::pair<uint64_t, uint32_t>> refs_by_address;  // (address, index into refs)
  size_t indexed_refs = 0;
  bool walked = false;     // its 'G' record arrived
  bool nodes_cut = false;  // nodes past kMaxNodesPerProcess were not kept: judged as a partial walk
  uint64_t topology_hash = 0;
  uint32_t launches = 0;  // recorded launches
  Site last_launch;
  uint64_t last_stream = 0;  // of the last recorded launch
  std::vector<GraphHit> hits;
  uint64_t hits_not_kept = 0;  // past kMaxHitsPerExec: counted only
  uint64_t next_hit_id = 1;
  std::map<uint32_t, uint32_t> hit_nodes;   // node -> hits on it: a repoint erases only if any
  std::optional<size_t> replay_after_free;  // the finding, once reported
  bool ref_dropped(const NodeRef& ref) const {
    return all_dropped || (ref.node < nodes.size() && nodes[ref.node].dropped);
  }
  // Graph lifecycle (graph_lifecycle.h).
  uint64_t geometry_hash = 0;  // of its nodes' launch geometry and copy sizes (v4)
  uint64_t pool_bytes = 0;     // allocated by the capturing thread during its capture
  bool rewalk = false;         // the walk under way follows an update, not an instantiate
  size_t lifecycle_site = SIZE_MAX;
  size_t lifecycle_key = SIZE_MAX;
  std::unique_ptr<ChurnFacts> pending_step;  // its re-capture, if it is dropped alone unused
  // Frozen values: its kernel nodes' arguments beside their kernels' eager launches (v9).
  std::vector<NodeArgs> node_args;
  bool updated = false;  // cudaGraphExecUpdate refreshed it in place
};

// What the model saw (facts, not findings): the graph rules (Rule::on_graph) judge them.
enum class GraphFactKind : uint8_t {
  ReplayAfterFree,  // an exec launched with nodes that reference memory freed since (hits)
  ReplayFailed,     // a sticky error while graphs were in flight (or may have been)
  KeyRecaptured,    // a key re-captured replacing hardly used execs (churn steps), at the end
  KeysAddedLate,    // a site captured new keys between replays (growth), at the end
  UpdateRejected,   // cudaGraphExecUpdate failed
  NodeArguments     // a kernel node's arguments beside its kernel's eager launches, at its end
};

struct GraphFacts {
  GraphFactKind kind = GraphFactKind::ReplayAfterFree;
  const trace::ApiEvent* ev = nullptr;  // the call the finding is at (null at the end)
  Site where;
  const ExecState* exec = nullptr;
  // replay-after-free
  const GraphHit* hit = nullptr;
  size_t more_hits = 0;
  // graph-replay-failed: the execs launched and not yet known to be finished
  std::vector<const ExecState*> in_flight;
  std::vector<const ExecState*> maybe_in_flight;  // past their recorded launches
  // graph-rebuilt-every-step and graph-specialization-growth
  const ChurnFacts* churn = nullptr;
  const GrowthFacts* growth = nullptr;
  size_t lifecycle_site = SIZE_MAX;  // index into GraphLifetime::lifecycle().sites()
  // graph-update-rejected
  uint32_t update_result = 1;
  uint32_t error_type = 0xff;
  std::string error_name;
  bool details_known = false;
  uint64_t update_graph = 0;
  const Capture* update_capture = nullptr;  // the capture that made the rejected graph
  // graph-argument-frozen
  std::shared_ptr<const NodeArgsFacts> node_args;
};

class GraphLifetime {
 public:
  // Every event, before the capture model applies it. `capture` is the open capture its
  // stream belongs to (null if none).
  void feed(const trace::ApiEvent& ev, const ApiInfo& api, GraphOp op, const CaptureModel& model);
  // Whether feed() has anything to do with this call (cheap: asked for every call).
  static bool wants(const trace::ApiEvent& ev, const ApiInfo& api, GraphOp op) {
    return op != GraphOp::None || api.kind == ApiKind::GraphInstantiate ||
           api.kind == ApiKind::GraphLaunch || api.kind == ApiKind::BeginCapture ||
           api.kind == ApiKind::StreamSync || api.kind == ApiKind::DeviceSync || ev.result != 0;
  }
  // An EndCapture that produced a graph.
  void on_end_capture(const trace::ApiEvent& ev, const Capture& capture);
  void on_graph_node(const trace::GraphNodeRecord& record);
  void on_graph(const trace::GraphRecord& record);
  void on_graph_update(const trace::GraphUpdateRecord& record);
  void on_kernel_args(const trace::KernelArgsRecord& record);
  void finish();
  const GraphLifecycle& lifecycle() const { return lifecycle_; }
  // The memory each lifecycle site's execs alive at exit hold (after finish), by owner.
  const std::vector<HeldRowFacts>& held(size_t site) const {
    static const std::vector<HeldRowFacts> kNone;
    return site < held_.size() ? held_[site] : kNone;
  }
  // The live exec of this handle, or null.
  const ExecState* find_exec(uint64_t handle) const {
    const auto it = execs_.find(handle);
    return it == execs_.end() ? nullptr : &it->second;
  }
  // A framework allocator's events for memory no live exec held: the interposer writes none, so
  // the trace is damaged or made (said as a warning; the events change nothing).
  uint64_t unheld_framework_events() const { return unheld_framework_events_; }
  // Graph nodes not kept (past kMaxNodesPerProcess), and kernel names not kept (past
  // kMaxKernelNames: those nodes are unnamed).
  uint64_t nodes_not_kept() const { return nodes_not_kept_; }
  uint64_t kernel_names_not_kept() const { return kernel_names_not_kept_; }
  // How lifecycle sites are told apart: stacks of the same content are one site.
  void set_site_key(GraphLifecycle::SiteKey key, const void* context) {
    lifecycle_.set_site_key(key, context);
  }

  // Facts concluded since the last take(); the replay emits findings for them.
  std::vector<GraphFacts>& pending() { return facts_; }
  // The replay made a finding of a fact: later repeats fold into it as consequences.
  void reported(const GraphFacts& facts, size_t finding);
  // Consequences to add to earlier findings: (finding index, count).
  std::vector<std::pair<size_t, uint32_t>>& consequences() { return consequences_; }

 private:
  struct CaptureOfGraph {
    std::shared_ptr<const Capture> capture;
    uint64_t begin_time = 0;
    uint64_t pool_bytes = 0;
  };
  struct OpenCapture {  // a capture this thread began: what it allocated meanwhile
    uint32_t tid = 0;
    uint64_t bytes = 0;
  };
  struct PendingUpdate {
    Site where;
    const trace::ApiEvent* ev = nullptr;
    trace::ApiEvent copy;
    uint64_t exec = 0;
    uint64_t graph = 0;
  };

  void allocate(const trace::ApiEvent& ev, GraphOp op);
  void release(const trace::ApiEvent& ev, GraphOp op);
  // A framework allocator's block given back or handed out: CUDA's allocation is untouched.
  void framework_block(const trace::ApiEvent& ev, GraphOp op);
  bool mark_reused(const MemoryBlock& block);  // the hits at its addresses now belong to it
  bool hit_execs(const MemoryBlock& block, const Site* free_site);
  void instantiate(const trace::ApiEvent& ev);
  void destroy(uint64_t exec);
  void node_args_facts(const ExecState& state);  // at its end: NodeArguments facts
  void launch(const trace::ApiEvent& ev, const ApiInfo& api);
  void sync(const trace::ApiEvent& ev, const ApiInfo& api);
  void sticky(const trace::ApiEvent& ev, const ApiInfo& api);
  void update(const trace::ApiEvent& ev);
  void repoint(const trace::ApiEvent& ev);  // a cudaGraphExec*NodeSetParams
  GraphFacts rejected_update(PendingUpdate& pending);
  void add_hit(ExecState& state, const NodeRef& ref, const MemoryBlock& block, const Site& free);
  void erase_hits(ExecState& state, uint32_t first, uint32_t last);
  void clear_refs(ExecState& state);
  ExecState* exec(uint64_t handle);

  std::map<uint64_t, MemoryBlock> blocks_;               // live, by base
  std::map<uint64_t, ExecState> execs_;                  // live, by handle
  std::map<uint64_t, CaptureOfGraph> graphs_;            // graph handle -> its capture
  std::deque<uint64_t> graph_order_;                     // graphs_'s keys, oldest first
  std::map<uint64_t, uint64_t> begin_times_;             // stream -> time its capture began
  std::map<uint64_t, std::vector<uint64_t>> in_flight_;  // stream -> exec handles
  std::vector<OpenCapture> open_captures_;               // few: one per capturing thread
  // Hits not yet reused by a later allocation, by the address their node holds: an allocation
  // looks up its range, not every hit of every exec (60k hits, then 200k
  // allocations, took 38 s). Entries of hits gone since (repointed, destroyed) are skipped.
  std::multimap<uint64_t, std::pair<uint64_t, uint64_t>> unreused_hits_;  // -> (exec, hit id)
  size_t purge_unreused_at_ = 4096;  // then entries of hits gone are dropped (amortized)
  GraphHit* find_hit(uint64_t exec, uint64_t id);
  GraphLifecycle lifecycle_;
  std::vector<std::vector<HeldRowFacts>> held_;  // per lifecycle site, at finish
  std::map<uint64_t, PendingUpdate> updates_;    // by event seq
  std::vector<GraphFacts> facts_;
  std::vector<std::pair<size_t, uint32_t>> consequences_;
  PendingUpdate kept_update_;  // behind the last update fact's event

  std::optional<size_t> sticky_finding_;
  bool sticky_seen_ = false;
  uint32_t next_serial_ = 1;
  size_t total_refs_ = 0;
  size_t total_nodes_ = 0;  // of the live execs
  uint64_t nodes_not_kept_ = 0;
  std::unordered_set<std::string> kernel_names_;  // nodes never move: GraphNodeInfo::name
  uint64_t kernel_names_not_kept_ = 0;
  std::string_view kernel_name(std::string_view name);
  uint64_t unheld_framework_events_ = 0;
};

// Limits that keep a damaged or enormous trace from using unbounded memory: the model holds
// live things only (allocations, execs, graphs not yet instantiated), each table capped.
inline constexpr size_t kMaxRefsPerProcess = 4'000'000;
// Nodes of live execs (the interposer's own walk stops far earlier a graph: graph_walker.h).
inline constexpr size_t kMaxNodesPerProcess = 2'000'000;
inline constexpr size_t kMaxKernelNames = 65'536;    // distinct kernel names of graph nodes
inline constexpr size_t kMaxLiveBlocks = 1'000'000;  // past it, new allocations are not tracked
inline constexpr size_t kMaxLiveExecs = 100'000;     // past it, new execs are not tracked
inline constexpr size_t kMaxGraphs = 4096;           // graph -> capture, oldest dropped first
inline constexpr size_t kMaxHitsPerExec = 4096;      // past it, frees are counted, not kept

}  // namespace capguard
