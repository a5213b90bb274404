// What the analyzer concludes, before it is rendered as text, JSON, SARIF or JUnit.
// Field meanings follow the JSON report's contract (docs/output-formats.md, "JSON"); every
// renderer reads only this.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/cupti_clients.h"
#include "model/who_ran.h"
#include "trace/format.h"

namespace capguard {

// Lowest first: a finding is "at or above" a threshold by comparison. Names: enum_names.def.
enum class Severity {
#define CAPGUARD_SEVERITY(value, name, heading) value,
#include "model/enum_names.def"
};

struct Frame {
  uint64_t address = 0;
  std::string function;  // empty when unknown
  std::string file;      // empty when unknown
  int line = 0;          // 0 when unknown
  std::string module;    // path of the loaded object
  uint64_t offset = 0;   // address - module load bias: what addr2line wants; 0 when no module
};

// "file:line:function": what makes two frames the same line of code (finding groups, rehearsal
// items).
inline std::string user_line_key(const Frame& frame) {
  return frame.file + ':' + std::to_string(frame.line) + ':' + frame.function;
}

// A host call stack, innermost frame first.
struct Location {
  uint32_t pid = 0;
  uint32_t stack_id = 0;            // id in that process's trace; 0 = no stack recorded
  std::vector<uint64_t> addresses;  // raw return addresses, as recorded
  std::vector<Frame> frames;        // filled by the symbolizer
  int user_frame = -1;              // index into frames of the program's own code; -1 none
  uint64_t seq = 0;                 // the event this location belongs to

  // frames[user_frame], or null when there is none.
  const Frame* user() const {
    return user_frame >= 0 && static_cast<size_t>(user_frame) < frames.size()
               ? &frames[static_cast<size_t>(user_frame)]
               : nullptr;
  }
  // The line that names it across processes: the user frame, else the innermost frame with a
  // source file; null when none has one.
  const Frame* line_frame() const {
    if (const Frame* u = user(); u != nullptr && !u->file.empty()) return u;
    for (const Frame& f : frames)
      if (!f.file.empty()) return &f;
    return nullptr;
  }
};

struct Related {
  std::string role;  // capture-begin, fork, event-record, last-work, capture-end, ...
  std::string detail;
  Location location;
};

struct Finding {
  std::string rule;
  std::optional<uint64_t> stream;  // the culprit call's stream, when it had one (not in JSON)
  Severity severity = Severity::Error;
  std::string message;
  std::string api;
  int result = 0;
  std::string result_name;  // cudaErrorStreamCaptureUnsupported / CUDA_ERROR_...
  uint32_t pid = 0;
  uint32_t process = 0;  // 1-based index into Report::processes; 0: known by pid only
  uint32_t thread = 0;
  bool capturing_thread = false;
  std::optional<uint32_t> capture;  // CaptureInfo::id
  Location location;
  std::vector<Related> related;
  uint32_t consequences = 0;  // later calls that failed only because of this one
  // What the user wrote, when the stack shows a framework entry point (framework_calls.def):
  // "Tensor.item()", and the fix in the framework's words. Empty otherwise.
  std::string framework_call;
  std::string framework_fix;
  // Else, when the culprit is a framework's code (framework_fixes.def), what happened in its
  // words ("a PyTorch op ran on the default stream inside torch.cuda.graph: ..."), said before
  // CUDA's account, and the rule's fix in its words (framework_fix). Empty otherwise.
  std::string framework_headline;
  // On a thread a framework started, with no user frame ("PyTorch autograd thread"); empty
  // otherwise. Such a finding's "started-by" related location is the user line that started
  // the thread's work.
  std::string thread_name;
  // The test that was running (pytest node id, from the plugin's marks: engine/test_marks.h).
  std::string test;
  // Capture rehearsal: found in a region run eagerly (`capguard run --rehearse`),
  // where it would break a capture of that region; `region` names it.
  bool rehearsed = false;
  std::string region;
};

enum class CaptureState {
#define CAPGUARD_CAPTURE_STATE(value, name) value,
#include "model/enum_names.def"
};

// A rehearsed region's verdict over its executions (model/rehearsal.h).
enum class RehearsalVerdict : uint8_t {
#define CAPGUARD_REHEARSAL_VERDICT(value, name) value,
#include "model/enum_names.def"
};

// One stream of a capture, as the pictures of it (HTML, DOT) draw it: the origin stream is
// lanes[0], then each stream forked in, in the order they joined. Not part of the JSON.
struct CaptureLane {
  uint64_t stream = 0;
  uint32_t work = 0;                    // calls that enqueued work on it during the capture
  std::optional<uint32_t> forked_from;  // lane whose recorded event it waited on (none: origin)
  std::optional<Location> fork;         // that wait
  std::optional<uint32_t> joined_into;  // lane that last waited on an event recorded on it
  std::optional<Location> join;         // that wait
  bool joined = true;                   // the origin waited for all of its work before the end
  std::optional<Location> last_work;
  std::string last_work_api;
};

struct CaptureInfo {
  uint32_t id = 0;  // 1-based, unique within the report
  uint32_t pid = 0;
  uint32_t process = 0;  // as Finding::process
  uint32_t thread = 0;
  uint64_t stream = 0;
  trace::CaptureMode mode = trace::CaptureMode::Global;
  CaptureState status = CaptureState::Open;
  std::optional<uint64_t> nodes;
  Location begin;
  std::optional<Location> end;
  std::optional<size_t> root_cause;  // index into Report::findings
  std::vector<CaptureLane> lanes;    // empty when the trace says nothing about its streams
  // Past the first kCapturesInDetail captures of a report, clean captures (status ok, no
  // finding) that repeat the same thread, stream, mode and begin/end sites share one entry:
  // `count` of them, ids `id` to `last_id`, `nodes` only when all agree. Memory then stays
  // bounded however many times a training loop re-captures.
  uint64_t count = 1;
  uint32_t last_id = 0;  // with count > 1
  // Past kCleanSitesInDetail such sites in a process, the rest share one entry whatever their
  // site (its locations are the first one's): `other_sites`.
  bool other_sites = false;
};

inline constexpr size_t kCapturesInDetail = 1000;
inline constexpr size_t kCleanSitesInDetail = 4096;

// One capture site's graph lifecycle: a row of the lifecycle table (text and HTML section, JSON
// "graph_lifecycle"). A site is the stack of cudaStreamBeginCapture; graphs built with the graph
// API rather than captured are counted under their cudaGraphInstantiate stack.
// Memory the site's execs alive at exit hold, one row per owner (and, for memory the program
// allocated itself, per allocating line): what a free of it would break (the lifecycle table's
// held memory; model/graph_held_memory.h computes it, name_held_memory names the owners).
struct HeldMemory {
  // Who keeps it: "PyTorch's CUDA caching allocator", "CuPy's memory pool", "cudaMalloc" (the
  // allocating call, memory the program allocated itself), "unknown" (no allocation capguard saw
  // holds it); empty until named. `other_rows`: the rows past the table's bound, summed.
  std::string owner;
  std::string pool;  // PyTorch's: "default pool" or "a graph's private pool"; empty otherwise
  Location alloc;    // the allocation's stack (a framework pool's segment); no frames: unknown
  bool alloc_known = false;
  bool in_capture = false;  // allocated by a capturing thread while its capture was open
  bool other_rows = false;
  std::string api;          // the allocating call
  std::string event_owner;  // a framework allocator's events named the block (before naming)
  uint64_t blocks = 0;      // allocations (a framework's blocks, where its events gave them)
  uint64_t bytes = 0;       // their sizes; 0 for unknown
  uint64_t addresses = 0;   // distinct addresses the execs' nodes hold in them
  uint64_t released = 0;    // of them, in memory given back since the graph was instantiated
};

struct GraphSiteInfo {
  uint32_t pid = 0;
  uint32_t process = 0;  // as Finding::process
  Location site;
  bool captured = true;        // false: the site is an instantiate (graph built by API calls)
  uint64_t graphs = 0;         // execs instantiated from the site's graphs
  uint32_t keys = 0;           // distinct graphs: node types, kernels, launch geometry, copy sizes
  uint32_t topologies = 0;     // distinct topologies (specializations of one share it)
  uint64_t updates = 0;        // execs refreshed in place (cudaGraphExecUpdate, node SetParams)
  uint64_t alive_at_exit = 0;  // execs never destroyed
  uint64_t launches = 0;       // graph launches outside captures
  bool launches_at_least = false;  // some exec replayed past its recorded launches: a floor
  uint64_t capture_ns = 0;         // capture begin to instantiate, summed over its graphs
  uint64_t pool_bytes = 0;         // allocated by the capturing thread while its captures were open
  std::vector<size_t> findings;    // lifecycle findings at this site: indexes into Report::findings
  std::vector<HeldMemory> held;    // memory its execs alive at exit hold, by owner
};

// Capture rehearsal: one rehearsed region of one process and its verdict over its
// executions (text section, JSON "rehearsals", HTML).
struct RehearsalItem {
  std::string what;  // allocation, free, synchronize, host copy, ... (rules/rehearsal.cpp)
  std::string rule;
  std::string api;
  uint32_t thread = 0;
  bool other_thread = false;    // not the region's thread (a global-mode capture forbids it too)
  uint32_t executions = 0;      // how many of the region's executions made it
  uint32_t last_execution = 0;  // the last of them, numbered in closing order from 1
  uint32_t calls = 1;           // calls at the same user line merged into this item
  std::string first_use;  // the framework's words when the stack shows them (framework_calls.def)
  Location location;
  // On a framework's thread without a user frame: its name, and the user line that
  // likely started its work (its finding's "started-by"); empty otherwise.
  std::string thread_name;
  std::optional<Frame> started_by;
};
struct RehearsalInfo {
  uint32_t pid = 0;
  uint32_t process = 0;  // as Finding::process
  std::string name, domain;
  trace::CaptureMode mode = trace::CaptureMode::Global;  // the capture mode judged against
  RehearsalVerdict verdict = RehearsalVerdict::Capturable;
  uint32_t executions = 0;            // closed ones
  uint32_t warmups = 0;               // capturable_after_warmup: executions to run before capturing
  std::vector<RehearsalItem> warmup;  // what only the warm-up executions did
  std::vector<RehearsalItem> breaks;  // not_capturable: what the last execution still broke
};

// Graph coverage after warm-up (trace format 9's 'n' records): from the first graph launch on,
// the kernels a process ran inside graph replays and those it launched eagerly. One per process
// that replayed a graph (text and HTML section, JSON "graph_coverage").
struct EagerSite {     // eager launches of one kernel from one stack (one user line after merging)
  std::string kernel;  // the driver's (mangled) name; empty when unknown
  Location location;   // the stack of its first launch in a phase
  uint64_t launches = 0;
  uint64_t threads = 0;        // grid x block, summed: the GPU work they stand for
  uint64_t phases = 0;         // phases between replays it launched in
  std::string framework_call;  // the framework entry point the stack shows, if any
};
struct CoverageInfo {
  uint32_t pid = 0;
  uint32_t process = 0;  // as Finding::process
  bool measured = true;  // false: eager launches bypassed capguard's hooks (not counted)
  uint64_t graph_launches = 0;
  uint64_t graph_kernels = 0;  // kernel nodes run by those launches
  uint64_t unwalked_launches =
      0;  // launches of execs whose nodes are unknown: not in graph_kernels
  uint64_t eager_kernels = 0;
  uint64_t phases = 0;           // phases between replays with eager launches
  uint64_t most_in_phase = 0;    // eager launches of the busiest phase
  std::vector<EagerSite> eager;  // most launches first (at most kEagerSitesKept, the rest summed)
  uint64_t other_sites = 0;      // sites past them
  // Kernels that ran as graphs, in percent of all kernels counted after warm-up (100 when none
  // were counted).
  double share() const {  // in doubles: counts read back from a JSON report may be any size
    const double all = static_cast<double>(graph_kernels) + static_cast<double>(eager_kernels);
    return all == 0 ? 100.0 : 100.0 * static_cast<double>(graph_kernels) / all;
  }
};
inline constexpr size_t kEagerSitesKept = 32;

// NCCL collectives inside graphs, per process (model/rank_collectives.h): facts the job-level
// rule rank-collective-mismatch compares across the ranks of a job. Only graphs that hold at
// least one NCCL kernel are kept.
struct CollectiveGraph {
  Location site;  // where its capture began (its instantiate when it was not captured)
  // What the graph does beside its collectives: node types, the other kernels and their launch
  // geometry, copy sizes, the topology. Process-independent (no address, no handle).
  uint64_t key = 0;
  std::vector<std::string> collectives;  // NCCL kernels in walk order: "AllReduce_Sum_f32_RING_LL"
  bool collectives_cut = false;          // more than kMaxCollectivesPerGraph
  uint64_t execs = 0;                    // execs instantiated with this content at this site
};
struct StreamReplay {  // the last graph launch a trace recorded on one stream
  uint64_t stream = 0;
  uint32_t graph = 0;    // index into RankCollectives::graphs
  uint64_t launch = 0;   // that launch's event seq
};
struct RankCollectives {
  uint32_t pid = 0;
  uint32_t process = 0;  // as Finding::process
  bool ended = true;     // false: the trace has no end record (killed, or still running)
  std::vector<CollectiveGraph> graphs;  // in the order first captured
  // Graph launches of those graphs in trace order, each exec's first kRecordedFirstLaunches
  // only (the launches every trace records), as indexes into graphs.
  std::vector<uint32_t> replays;
  bool replays_cut = false;        // more than kMaxReplaysKept
  std::vector<StreamReplay> last;  // per stream (at most kMaxReplayStreams)
};
inline constexpr size_t kMaxCollectiveGraphs = 4096;  // per process
inline constexpr size_t kMaxCollectivesPerGraph = 1024;
inline constexpr size_t kMaxReplaysKept = 4096;
inline constexpr size_t kMaxReplayStreams = 64;
inline constexpr size_t kMaxCollectiveName = 128;

// The CUDA a process ran (trace format 7's 'w' record). Versions as CUDA_VERSION
// (12040 = 12.4), 0 unknown; recorded is false for older traces.
struct CudaInfo {
  bool recorded = false;
  uint32_t runtime = 0, driver = 0, cupti_major = 0, cupti_api = 0, other_runtime = 0;
  std::string linkage;  // "shared", "static", "unknown"
  std::string runtime_path, cupti_path;
};
// "12.4" ("unknown" for 0, "12.x" for 12999: the interposer knew the major alone).
std::string cuda_version_text(uint32_t version);
// "CUDA 12.4 runtime (static cudart), driver 13.0, CUPTI 12 (API 28)", for reports.
std::string cuda_info_text(const CudaInfo& cuda);

// A framework allocator's hook in the process (trace/framework_memory.def): whether its frees of
// memory a graph holds were seen.
struct FrameworkHookInfo {
  std::string owner;  // "PyTorch's CUDA caching allocator"
  bool attached = false;
  std::string state;  // in words: attached, or why not
};

struct ProcessInfo {
  uint32_t pid = 0;
  std::string command;
  bool attached = false;
  std::string attach_message;  // why not attached, or what attached
  std::string trace_path;
  // Its start ('p' record): with the pid and the host, what tells this process from another of
  // the same pid and host (two containers, a trace beside a report of the same name).
  uint64_t start_unix_ns = 0;
  std::vector<CuptiClientInfo> cupti_clients;  // the program's own, sharing CUPTI with capguard
  // Non-empty when capguard's subscription was gone at exit: what was not checked, in words.
  std::string cupti_lost;
  // The tests that ran in it, in order (pytest node ids: engine/test_marks.h), findings or not.
  std::vector<std::string> tests;
  CudaInfo cuda;
  // Who ran it: traces of format 8 on, and JSON reports made from them.
  std::optional<WhoRan> who;
  std::vector<FrameworkHookInfo> framework_hooks;
};

// Why the analysis saw less than it was asked to (a trace that could not be read, a program
// capguard could not attach to): reports carry it, so that a report is written, and says so,
// even when nothing could be checked.
struct ToolProblem {
  Severity level = Severity::Error;  // Warning: tolerated (--no-require-attach)
  std::string message;
  // The gate's "watched in part" reason (a trace without its end, a partial analysis, a
  // rehearsal never executed, ranks that never reported): a warning only while findings fail
  // the gate anyway, so a merge judges it again against the findings it keeps.
  bool unfinished = false;
  // The --min-graph-coverage gate's reason: a merge of node reports judges the merged counts
  // again (engine/gate.cpp) and drops the nodes' own.
  bool coverage_gate = false;
};

// A rule option (rules/rules.def) set to other than its default (--rule-option).
struct RuleOptionValue {
  std::string rule, option;
  uint64_t value = 0;
  uint64_t default_value = 0;
};

struct Report {
  std::vector<ProcessInfo> processes;
  std::vector<CaptureInfo> captures;
  std::vector<Finding> findings;
  std::vector<ToolProblem> problems;
  std::vector<GraphSiteInfo> graph_sites;  // the lifecycle table, most captures first per process
  std::vector<RehearsalInfo> rehearsals;   // capture rehearsal
  std::vector<CoverageInfo> coverage;      // graph coverage after warm-up, per process
  std::vector<RankCollectives> collectives;  // NCCL collectives in graphs, per process
  std::vector<RuleOptionValue> rule_options;  // only those not at their default
  // The --fail-on the gate judged this report with ("error" ... "never"); empty: not judged yet
  // (a merge refuses to vouch for a node report judged with another gate).
  std::string judged_fail_on;

  uint64_t capture_count() const {
    uint64_t n = 0;
    for (const auto& c : captures) n += c.count;
    return n;
  }

  // The capture with this id (CaptureInfo::id), or null.
  const CaptureInfo* find_capture(std::optional<uint32_t> id) const {
    if (!id) return nullptr;
    // The replay lists captures by id (each process's ids above the last one's): a binary
    // search finds it; a report put together otherwise still gets a right answer, slower.
    const auto at = std::lower_bound(captures.begin(), captures.end(), *id,
                                     [](const CaptureInfo& c, uint32_t v) { return c.id < v; });
    if (at != captures.end() && at->id == *id) return &*at;
    for (const auto& capture : captures)
      if (capture.id == *id) return &capture;
    return nullptr;
  }

  int count(Severity s) const {
    int n = 0;
    for (const auto& f : findings) n += f.severity == s;
    return n;
  }
};

// Calls f(location) on every location of a capture (CaptureInfo, const or not): where it
// began and ended, then its lanes' forks, joins and last work.
template <class Capture, class F>
void for_each_location(Capture& capture, F&& f) {
  f(capture.begin);
  if (capture.end) f(*capture.end);
  for (auto& lane : capture.lanes)
    for (auto* site : {&lane.fork, &lane.join, &lane.last_work})
      if (*site) f(**site);
}
// Whether a finding or capture (its `process` and `pid`) belongs to report.processes[index].
// Processes of several hosts or containers can share a pid: the index tells them apart.
bool belongs_to(const Report& report, size_t index, uint32_t process, uint32_t pid);

// belongs_to() without a scan over the processes: built once per report, so that renderers
// grouping findings and captures by process stay linear however many processes a report holds
// (100k small traces took minutes).
class ProcessOwners {
 public:
  explicit ProcessOwners(const Report& report);
  // Calls f(index) for every index with belongs_to(report, index, process, pid), ascending.
  template <class F>
  void for_each(uint32_t process, uint32_t pid, F&& f) const {
    if (process != 0) {
      if (process - 1 < processes_) f(static_cast<size_t>(process - 1));
      return;
    }
    if (const auto it = by_pid_.find(pid); it != by_pid_.end())
      for (size_t index : it->second) f(index);
  }
  // How many processes have this pid.
  size_t with_pid(uint32_t pid) const {
    const auto it = by_pid_.find(pid);
    return it == by_pid_.end() ? 0 : it->second.size();
  }
  // The first such index, or none.
  std::optional<size_t> first(uint32_t process, uint32_t pid) const {
    std::optional<size_t> found;
    for_each(process, pid, [&](size_t index) {
      if (!found) found = index;
    });
    return found;
  }

 private:
  size_t processes_ = 0;
  std::unordered_map<uint32_t, std::vector<size_t>> by_pid_;
};

// The names of enum_names.def, as reports write them.
const char* to_string(Severity s);
const char* to_string(CaptureState s);
const char* to_string(RehearsalVerdict verdict);  // capturable | capturable_after_warmup | ...
const char* mode_name(trace::CaptureMode mode);   // global | thread_local | relaxed

}  // namespace capguard
