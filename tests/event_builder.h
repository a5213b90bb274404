// Builds call sequences for the rule tests so that each test reads like the bug it catches:
//
//   Sim sim;
//   sim(create_stream(kS, kNonBlocking))(begin(kS))(launch(kS))(memcpy_sync())(end(kS));
//   CHECK(rules_of(sim.finish()) == Rules{"escaped-sync-copy"});
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/replay.h"
#include "interposer/api_table.h"
#include "interposer/graph_policy.h"
#include "model/report.h"
#include "trace/event.h"
#include "trace/framework_memory.h"

namespace capguard::testing {

using trace::CaptureMode;
using trace::Field;

inline constexpr uint64_t kS = 0x5501;   // the capturing stream
inline constexpr uint64_t kS2 = 0x5502;  // a side stream
inline constexpr uint64_t kS3 = 0x5503;
inline constexpr uint64_t kE = 0xe1;  // events
inline constexpr uint64_t kE2 = 0xe2;
inline constexpr uint64_t kE3 = 0xe3;
inline constexpr bool kNonBlocking = true;
inline constexpr bool kBlocking = false;
inline constexpr uint32_t kWaitExternal = 0x1;  // cudaEventWaitExternal

struct Ev {
  trace::ApiEvent e;
  bool thread_set = false;

  Ev& fails(int result) {
    e.result = result;
    return *this;
  }
  Ev& thread(uint32_t tid) {
    e.tid = tid;
    thread_set = true;
    return *this;
  }
  Ev& stack(uint32_t id) {
    e.stack = id;
    return *this;
  }
  Ev& stream(uint64_t s) {
    e.stream = s;
    e.set(Field::Stream);
    return *this;
  }
  Ev& event(uint64_t ev) {
    e.event = ev;
    e.set(Field::Event);
    return *this;
  }
  Ev& flags(uint32_t f) {
    e.flags = f;
    e.set(Field::Flags);
    return *this;
  }
  Ev& stream_flags(uint32_t f) {
    e.stream_flags = f;
    e.set(Field::StreamFlags);
    return *this;
  }
  Ev& mode(CaptureMode m) {
    e.mode = m;
    e.set(Field::Mode);
    return *this;
  }
  Ev& nodes(uint64_t n) {
    e.nodes = n;
    e.set(Field::Nodes);
    return *this;
  }
  Ev& capture_id(uint64_t id) {
    e.capture_id = id;
    e.set(Field::CaptureId);
    return *this;
  }
  Ev& status_before(trace::CaptureStatus s) {
    e.status_before = s;
    e.set(Field::StatusBefore);
    return *this;
  }
  Ev& status_after(trace::CaptureStatus s) {
    e.status_after = s;
    e.set(Field::StatusAfter);
    return *this;
  }
};

// `api` must be a string literal (the replay keeps the view, as it does the reader's names).
inline Ev call(std::string_view api) {
  Ev ev;
  ev.e.api = api;
  return ev;
}

// Graph handles of an event: the graph a call names (EndCapture, instantiate) and its exec.
inline Ev with_graph(Ev ev, uint64_t graph) {
  ev.e.graph = graph;
  ev.e.set(trace::Field::Graph);
  return ev;
}
inline Ev with_exec(Ev ev, uint64_t exec) {
  ev.e.graph_exec = exec;
  ev.e.set(trace::Field::GraphExec);
  return ev;
}
inline Ev create_stream(uint64_t s, bool non_blocking) {
  return call("cudaStreamCreateWithFlags").stream(s).flags(non_blocking ? 1 : 0);
}
inline Ev destroy_stream(uint64_t s) { return call("cudaStreamDestroy").stream(s); }
inline Ev begin(uint64_t s, CaptureMode m = CaptureMode::Global) {
  return call("cudaStreamBeginCapture").stream(s).mode(m);
}
inline Ev end(uint64_t s) { return call("cudaStreamEndCapture").stream(s); }
inline Ev launch(uint64_t s) { return call("cudaLaunchKernel").stream(s); }
inline Ev memcpy_async(uint64_t s) { return call("cudaMemcpyAsync").stream(s); }
inline Ev memcpy_sync() { return call("cudaMemcpy"); }
inline Ev memset_sync() { return call("cudaMemset"); }
inline Ev record(uint64_t e, uint64_t s) { return call("cudaEventRecord").event(e).stream(s); }
inline Ev wait(uint64_t s, uint64_t e, uint32_t f = 0) {
  return call("cudaStreamWaitEvent").stream(s).event(e).flags(f);
}
inline Ev stream_sync(uint64_t s) { return call("cudaStreamSynchronize").stream(s); }
inline Ev device_sync() { return call("cudaDeviceSynchronize"); }
inline Ev event_query(uint64_t e) { return call("cudaEventQuery").event(e); }
inline Ev event_sync(uint64_t e) { return call("cudaEventSynchronize").event(e); }
inline Ev malloc_() { return call("cudaMalloc"); }
inline Ev exchange_mode(CaptureMode m) {
  return call("cudaThreadExchangeStreamCaptureMode").mode(m);
}

// The interposer's table entry for a function name as a trace spells it ("cudaMemcpyAsync",
// "cuMemcpyHtoD_v2", "cudaLaunchKernel_ptsz").
inline const interposer::CallbackInfo& callback_info(std::string_view api) {
  static const std::map<std::string, const interposer::CallbackInfo*, std::less<>> by_name = [] {
    std::map<std::string, const interposer::CallbackInfo*, std::less<>> names;
    for (auto domain : {trace::ApiDomain::Runtime, trace::ApiDomain::Driver}) {
      for (uint32_t cbid = 1; cbid < interposer::api_table_size(domain); ++cbid) {
        const interposer::CallbackInfo& info = interposer::api_info(domain, cbid);
        if (info.name == nullptr) continue;
        std::string name(info.name);
        // CUPTI's runtime enum names carry the version (cudaMemcpy_v3020); traces do not.
        if (domain == trace::ApiDomain::Runtime && name.find("_v") != std::string::npos)
          name.erase(name.rfind("_v"));  // cudaMemcpy_ptds_v7000 -> cudaMemcpy_ptds
        names.emplace(name, &info);
      }
    }
    return names;
  }();
  static const interposer::CallbackInfo unknown{};
  const auto it = by_name.find(api);
  return it != by_name.end() ? *it->second : unknown;
}

// One replayed process. Each event goes through the interposer's record policy first, so a
// test cannot lean on an event that the interposer never writes.
struct Sim {
  Report report;
  Replay replay{report, 4242};
  uint64_t next_seq = 1;
  uint32_t current_thread = 1;
  std::vector<uint64_t> open_origins;  // the interposer's CaptureSet
  int unrecorded = 0;                  // events the interposer would not have written
  // The interposer's graph watch (graph_policy.h): which launches, syncs and stream-ordered
  // allocations it records outside captures. Tests add the bases a graph walk would.
  std::unique_ptr<interposer::GraphWatch> graph_watch = std::make_unique<interposer::GraphWatch>();
  // The addresses each exec holds (held_memory.h): tests add a walk's refs, and a framework
  // allocator's event is recorded only when its block holds one.
  std::unique_ptr<interposer::HeldMemory> held = std::make_unique<interposer::HeldMemory>();
  bool every_event = false;

  struct EveryEvent {};
  Sim() = default;
  // Model tests only: feed what the interposer would filter out too.
  explicit Sim(EveryEvent) : every_event(true) {}

  Sim& on_thread(uint32_t tid) {
    current_thread = tid;
    return *this;
  }
  Sim& operator()(Ev ev) {
    if (!every_event && !recorded_by_interposer(ev.e)) {
      ++unrecorded;
      return *this;
    }
    if (!ev.thread_set) ev.e.tid = current_thread;
    ev.e.seq = next_seq++;
    replay.feed(ev.e);
    return *this;
  }
  // Capture rehearsal: a rehearsed NVTX range opened and closed on the current
  // thread, as the interposer writes them ('r'/'R'); while one is open it records every call.
  std::vector<std::pair<uint32_t, uint64_t>> open_ranges;  // (thread, range id)
  uint64_t next_range = 1;
  Sim& range_push(std::string_view name, std::string_view domain = "") {
    const uint64_t id = next_range++;
    open_ranges.emplace_back(current_thread, id);
    replay.range_begin({next_seq++, 0, current_thread, id, domain, name});
    return *this;
  }
  Sim& range_pop() {
    for (auto it = open_ranges.rbegin(); it != open_ranges.rend(); ++it) {
      if (it->first != current_thread) continue;
      replay.range_end({next_seq++, 0, current_thread, it->second, {}, {}});
      open_ranges.erase(std::next(it).base());
      break;
    }
    return *this;
  }
  Sim& exit_thread(uint32_t tid) {
    replay.thread_exit(tid);
    return *this;
  }
  bool recorded_by_interposer(const trace::ApiEvent& e) {
    if (const trace::FrameworkMemoryInfo* framework = trace::find_framework_memory(e.api)) {
      bool newly_watched = false;
      return framework->op == trace::FrameworkMemoryOp::Attach ||
             interposer::records_framework_block(*held, *graph_watch, e.pointer, e.size,
                                                 newly_watched);
    }
    const interposer::CallbackInfo& info = callback_info(e.api);
    const bool capturing = !open_origins.empty();
    const bool active = capturing || !open_ranges.empty();
    const auto origin = std::find(open_origins.begin(), open_origins.end(), e.stream);
    const bool on_origin = origin != open_origins.end();
    if ((info.kind == ApiKind::EndCapture || info.kind == ApiKind::StreamDestroy) && on_origin) {
      open_origins.erase(origin);
    }
    if (info.kind == ApiKind::BeginCapture && e.result == 0) open_origins.push_back(e.stream);
    const bool capture_active = active || info.kind == ApiKind::EndCapture;
    if (!interposer::records_call(info, capture_active, e.result, e.graph_exec,
                                  capturing && on_origin, *graph_watch))
      return false;
    interposer::note_graph_call(info, e, *graph_watch);
    if (info.kind == ApiKind::GraphExecDestroy && e.result == 0) held->remove(e.graph_exec);
    return true;
  }
  const Report& finish() {
    replay.finish();
    return report;
  }
};

using Rules = std::vector<std::string>;
inline Rules rules_of(const Report& report) {
  Rules out;
  for (const Finding& f : report.findings) out.push_back(f.rule);
  return out;
}
inline bool has_role(const Finding& f, std::string_view role) {
  for (const Related& r : f.related)
    if (r.role == role) return true;
  return false;
}
inline const Related* related(const Finding& f, std::string_view role, size_t nth = 0) {
  for (const Related& r : f.related)
    if (r.role == role && nth-- == 0) return &r;
  return nullptr;
}

}  // namespace capguard::testing
