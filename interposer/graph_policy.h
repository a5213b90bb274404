// Graph lifetime: the part of the record policy outside captures that the graph watch
// (graph_watch.h) decides, shared by the recorder and the tests' simulated interposer
// (tests/event_builder.h), so both record the same calls.
//
// Outside captures: an allocation or free of the catalog's memory column that takes no stream is
// should_record's (api_table.h); a stream-ordered one is recorded only while a graph exec lives
// (PyTorch's cudaMallocAsync backend allocates per tensor); a graph launch while the watch wants
// it (an exec's first launches, every launch of an exec a free hit); a synchronize (not a query:
// PyTorch polls events) once any exec exists, when it failed (a replay's sticky error surfaces
// there) or follows a recorded launch.
#pragma once

#include "interposer/api_table.h"
#include "interposer/graph_watch.h"
#include "interposer/held_memory.h"

namespace capguard::interposer {

// Whether the graph watch wants this call recorded although should_record would not. Counts the
// launch (and consumes the pending launches for a sync), so ask once per call, outside captures.
inline bool graph_watch_records(const CallbackInfo& info, int32_t result, uint64_t exec,
                                GraphWatch& watch) {
  if (info.kind == ApiKind::GraphLaunch) return watch.on_launch(exec);
  if (info.synchronizes) {
    if (!watch.anything()) return false;
    return watch.on_sync(result);
  }
  if (info.memory != MemoryOp::None) return info.names_stream() && watch.any_live();
  return false;
}

// The whole record decision at a call's EXIT, for the recorder and the tests' event builder alike:
// the record policy (api_table.h), what the graph watch adds outside captures, and the capture's
// body on its own origin stream left out. `on_open_origin`: the call's stream is the origin of an
// open capture.
inline bool records_call(const CallbackInfo& info, bool capture_active, int32_t result,
                         uint64_t exec, bool on_open_origin, GraphWatch& watch) {
  const bool forced = !capture_active && graph_watch_records(info, result, exec, watch);
  if (!forced && !should_record(info, capture_active, result)) return false;
  return !(capture_active && on_open_origin && is_capture_body(info, result));
}

// After a recorded call: what the watch learns from it (the recorder walks the graph too).
inline void note_graph_call(const CallbackInfo& info, const trace::ApiEvent& event,
                            GraphWatch& watch) {
  if (event.result != 0) return;
  if (is_free(info.memory)) {
    if (event.pointer != 0)
      watch.on_free(event.pointer, event.has(trace::Field::Size) ? event.size : 0);
  } else if (info.kind == ApiKind::GraphExecDestroy) {
    watch.on_destroy(event.graph_exec);
  } else if ((info.kind == ApiKind::GraphInstantiate || info.kind == ApiKind::GraphExecUpdate) &&
             event.graph_exec != 0) {
    watch.on_instantiate(event.graph_exec);
  }
}

// A framework allocator's block given back or handed out (torch_allocator.h), for the recorder
// and the tests' event builder alike: recorded when a live exec holds an address in it, and
// those execs' launches are recorded from then on. `newly_watched`: an exec was not watched yet
// (the launch callbacks must then be switched on).
inline bool records_framework_block(HeldMemory& held, GraphWatch& watch, uint64_t address,
                                    uint64_t size, bool& newly_watched) {
  newly_watched = false;
  if (!held.any()) return false;
  uint64_t execs[16];
  const size_t n = held.holders(address, size, execs, 16);
  for (size_t i = 0; i < n; ++i) newly_watched |= watch.watch(execs[i]);
  return n != 0;
}

// The callbacks the reduced set holds beside callback_needed_outside_capture's while the watch
// wants them (callback_gate.h).
inline bool callback_wanted_by_graph_watch(const CallbackInfo& info, const GraphWatch& watch) {
  if (info.kind == ApiKind::GraphLaunch) return watch.launches_wanted();
  if (info.synchronizes) return watch.syncs_wanted();
  return false;
}

}  // namespace capguard::interposer
