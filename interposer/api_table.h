// What the interposer knows about each CUDA API, by CUPTI callback id: its kind (from the one
// catalog the analyzer classifies by too, trace/api_catalog.def) and where the parameters that
// matter sit in its CUPTI params struct. One table for both domains, generated from the CUPTI
// headers (api_table_12.inc, api_table_13.inc: gen_api_table.py), and the record policy that is decided from it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "trace/api_kind.h"
#include "trace/cuda_results.h"
#include "trace/event.h"
#include "trace/format.h"

namespace capguard::interposer {

// Parameters the interposer decodes. Out* are pointers the call writes a handle through.
enum class Slot : uint8_t {
  Stream,
  OutStream,
  Event,
  OutEvent,
  Flags,
  Mode,
  ModePtr,
  CopyKind,
  Graph,
  OutGraph,
  GraphExec,
  OutGraphExec,
  // Graph lifetime.
  UpdateInfo,  // cudaGraphExecUpdateResultInfo* / CUgraphExecUpdateResultInfo*
  Ptr,         // the address freed / registered / mapped
  OutPtr,      // where an allocation writes its address
  Size,        // bytes allocated / registered / mapped / unmapped
  // const cudaLaunchConfig_t* / const CUlaunchConfig*: the stream is its member (decode.cpp).
  LaunchConfig,
  Node,  // cudaGraphNode_t / CUgraphNode: the node a cudaGraphExec*SetParams call changes
};
inline constexpr size_t kSlotCount = 18;

// Where cudaLaunchConfig_t::stream and CUlaunchConfig::hStream sit: the same place in both
// (api_table.cpp checks it against the CUDA headers), so one offset serves both domains.
inline constexpr size_t kLaunchConfigStreamOffset = 32;

struct CallbackInfo {
  const char* name = nullptr;  // CUPTI's enum name (cudaMemcpyAsync_v3020); null if unknown
  ApiKind kind = ApiKind::Other;
  MemoryOp memory = MemoryOp::None;  // the catalog's memory column (graph lifetime)
  bool per_thread = false;     // a _ptsz/_ptds entry point: stream 0 means cudaStreamPerThread
  bool returns_error = false;  // functionReturnValue is a cudaError_t / CUresult
  bool has_params = false;     // CUPTI passes a params struct
  bool internal = false;       // the runtime's own __cuda* entry points (<<<>>> configuration)
  bool getter = false;         // *Get* calls: names, attributes, the current context, ...
  bool synchronizes = false;  // a sync kind that waits (*Synchronize), not a query (graph_policy.h)
  uint8_t offset_plus_one[kSlotCount] = {};  // 0 = the call has no such parameter

  bool has(Slot slot) const { return offset_plus_one[static_cast<size_t>(slot)] != 0; }
  size_t offset(Slot slot) const { return offset_plus_one[static_cast<size_t>(slot)] - 1u; }
  // The call names a stream: as a parameter, or inside its launch config.
  bool names_stream() const { return has(Slot::Stream) || has(Slot::LaunchConfig); }
};

// One generated table per supported CUDA major, each compiled against that
// release's CUPTI headers: api_table_12.cpp, api_table_13.cpp. A callback id means the same
// function in both (CUPTI only appends ids; gen_api_table.py --check-majors checks it), but
// 13.0 dropped calls 12.x still makes (cudaStreamGetCaptureInfo_v2, cudaGraphAddDependencies
// without edges, ...), whose params only 12.x's headers describe.
struct ApiTable {
  int major;
  const CallbackInfo* runtime;
  uint32_t runtime_size;
  const CallbackInfo* driver;
  uint32_t driver_size;
};
const ApiTable& api_table_cuda12();
const ApiTable& api_table_cuda13();
inline constexpr int kOldestCudaMajor = 12;
inline constexpr int kNewestCudaMajor = 13;

// Which major decodes first: the CUDA major of the CUPTI that attached (cupti_loader.cpp sets
// it before enabling any callback; 13 until then). An id the first table has no params struct
// for is decoded by the other table where it has one, so a process that holds two runtimes (a
// CUDA 12 library in a CUDA 13 program) is still decoded by each one's layout.
void select_api_major(int major);
int selected_api_major();

// The entry for a callback id; an id newer than the headers gets an empty entry (kind Other,
// nothing decoded), so a newer CUPTI degrades to recording the bare call during captures.
const CallbackInfo& api_info(trace::ApiDomain domain, uint32_t cbid);
// One past the largest callback id the selected major's table knows: the ids the loaded CUPTI
// can be asked to enable.
uint32_t api_table_size(trace::ApiDomain domain);

// The record policy. During a capture every top-level call is recorded; outside captures only
// what the analyzer's model reads there (the kinds marked `outside` in trace/api_kinds.def),
// and any call a capture error came from. Graph launches are left out there: a replay loop
// must cost (almost) nothing.
//
// The CUPTI callbacks enabled while no capture is open (callback_gate.h): exactly the calls
// recorded outside captures. A call of another kind that fails with a capture error outside
// any capture this process knows of is then not seen. Every capture opens with a BeginCapture
// (always on) and the capture errors of docs/measured.md come while one is open; every
// testcase keeps its findings with the reduced set (docs/performance.md).
// Graph lifetime: the allocations and frees of the catalog's memory column too, and
// (graph_policy.h) graph launches and syncs while the graph watch wants them.
inline bool callback_needed_outside_capture(const CallbackInfo& info) {
  return recorded_outside_capture(info.kind) || info.memory != MemoryOp::None;
}
inline bool is_capture_error(ApiKind kind, int32_t result) {
  return trace::is_capture_error(result) ||
         (kind == ApiKind::EndCapture && result == trace::kErrIllegalState);
}
// The body of a capture: a call that succeeded and only adds work to a stream (a kind the model
// does not track, no event). When that stream is the origin of an open capture, success means
// the work was captured (a dead capture answers 901), and no rule reads it: the node count comes
// with EndCapture, and what the rules need (forked streams' work, event records and waits,
// failures, escapes onto other streams, graph launches) is still recorded. So it is not
// recorded, not unwound, and its stream's status is not asked: each of those costs more than
// the call itself (measured on the H100: about 4 us per cuStreamGetCaptureInfo made from
// inside a callback).
inline bool is_capture_body(const CallbackInfo& info, int32_t result) {
  return !recorded_outside_capture(info.kind) && info.kind != ApiKind::GraphLaunch &&
         info.names_stream() && !info.has(Slot::Event) && !info.has(Slot::OutEvent) &&
         result == 0;
}
// Graph lifetime: an allocation or free that takes no stream, when it succeeded or
// returned a sticky error (a faulted replay surfaces at whatever call comes next). Stream-ordered
// ones, launches and syncs: graph_policy.h.
inline bool memory_recorded_outside_capture(const CallbackInfo& info, int32_t result) {
  return info.memory != MemoryOp::None && !info.names_stream() &&
         (result == 0 || trace::is_sticky_error(result));
}
inline bool should_record(const CallbackInfo& info, bool capture_active, int32_t result) {
  const bool tracked =
      recorded_outside_capture(info.kind) || memory_recorded_outside_capture(info, result);
  // Every <<<>>> launch calls __cudaPushCallConfiguration and __cudaPopCallConfiguration
  // around cudaLaunchKernel: recording them cost two stacks per captured launch for nothing.
  if (!tracked && info.internal && result == 0) return false;
  // Nor successful getters: CUPTI itself calls cuKernelGetName at the top level for every
  // launch, which cost a recorded stack per captured kernel (seen on the H100).
  if (!tracked && info.getter && result == 0) return false;
  return capture_active || tracked || is_capture_error(info.kind, result);
}

}  // namespace capguard::interposer
