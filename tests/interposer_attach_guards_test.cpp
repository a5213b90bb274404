// The attach guards and the idle detach, on the CPU: what the resolvers hand out,
// that a guard forwards its six argument registers unchanged, that an Attach call finds CUPTI
// attached (waiting for a detach in progress, attaching again when detached), that a sync's
// failure while detached is delivered, and when the idle detach lets CUPTI go. The list itself
// is held to the record policy: every driver function recorded outside captures is guarded.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "interposer/attach_guards.h"
#include "interposer/idle_detach.h"
#include "interposer/launch_hooks.h"

namespace capguard::interposer {
namespace {

namespace guards = attach_guards;

using Forward = uintptr_t (*)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);
using ResolveV2 = CUresult (*)(const char*, void**, int, cuuint64_t,
                               CUdriverProcAddressQueryResult*);

std::vector<std::vector<uintptr_t>> g_calls;
std::atomic<bool> g_hold{false};     // fake_free blocks while set
std::atomic<bool> g_holding{false};  // ... and says it is inside
int g_sync_result = 0;

// Six arguments as the driver would receive them; a 32-bit result (the upper half of rax is
// whatever the callee leaves there).
CUresult fake_six(CUstream s, CUgraph g, const CUgraphNode* d, const CUgraphEdgeData* e, size_t n,
                  CUstreamCaptureMode mode) {
  g_calls.push_back({reinterpret_cast<uintptr_t>(s), reinterpret_cast<uintptr_t>(g),
                     reinterpret_cast<uintptr_t>(d), reinterpret_cast<uintptr_t>(e), n,
                     static_cast<uintptr_t>(mode)});
  return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}
CUresult fake_free(CUdeviceptr pointer) {
  g_holding.store(true);
  while (g_hold.load()) std::this_thread::yield();
  g_holding.store(false);
  g_calls.push_back({pointer});
  return CUDA_SUCCESS;
}
CUresult fake_sync(CUstream stream) {
  g_calls.push_back({reinterpret_cast<uintptr_t>(stream)});
  return static_cast<CUresult>(g_sync_result);
}
CUresult fake_graph_launch(CUgraphExec, CUstream) { return CUDA_SUCCESS; }

CUresult fake_resolve(const char* symbol, void** pfn, int, cuuint64_t,
                      CUdriverProcAddressQueryResult*);
CUresult fake_resolve(const char* symbol, void** pfn, int, cuuint64_t,
                      CUdriverProcAddressQueryResult*) {
  const std::string_view name(symbol);
  if (name == "cuGetProcAddress")
    *pfn = reinterpret_cast<void*>(&fake_resolve);
  else if (name == "cuStreamBeginCaptureToGraph")
    *pfn = reinterpret_cast<void*>(&fake_six);
  else if (name == "cuMemFree")
    *pfn = reinterpret_cast<void*>(&fake_free);
  else if (name == "cuStreamSynchronize")
    *pfn = reinterpret_cast<void*>(&fake_sync);
  else if (name == "cuGraphLaunch")
    *pfn = reinterpret_cast<void*>(&fake_graph_launch);
  else
    *pfn = reinterpret_cast<void*>(&fake_resolve);
  return CUDA_SUCCESS;
}

void* resolve(ResolveV2 resolver, const char* symbol, cuuint64_t flags = 0) {
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult status{};
  REQUIRE(resolver(symbol, &pfn, 13000, flags, &status) == CUDA_SUCCESS);
  return pfn;
}

// A CUDA runtime's resolver: dlsym'd through the launch hooks, then asked for itself.
ResolveV2 runtime_resolver() {
  launch_hooks::enable(0, 0);
  const auto driver = reinterpret_cast<ResolveV2>(
      launch_hooks::answer_dlsym("cuGetProcAddress_v2", reinterpret_cast<void*>(&fake_resolve),
                                 reinterpret_cast<const void*>(&resolve)));
  REQUIRE(reinterpret_cast<void*>(driver) != nullptr);
  return reinterpret_cast<ResolveV2>(resolve(driver, "cuGetProcAddress"));
}

struct Seen {
  int attaches = 0, heartbeats = 0;
  std::vector<std::pair<int, uintptr_t>> failed_syncs;
  bool attach_succeeds = true;
} g_seen;

void listen_fakes(uint32_t period = 1) {
  g_seen = Seen{};
  guards::Listener listener;
  listener.attach = [] {
    ++g_seen.attaches;
    if (g_seen.attach_succeeds) guards::state().store(guards::State::Attached);
  };
  listener.heartbeat = [] { ++g_seen.heartbeats; };
  listener.sync_failed = [](int guard, bool, uintptr_t arg, int) {
    g_seen.failed_syncs.push_back({guard, arg});
  };
  listener.period = period;
  guards::listen(listener);
}

TEST_CASE("attach guards: wrapped by the runtime's resolver, dlsym and per-thread twins") {
  guards::reset_for_tests();
  const ResolveV2 runtime = runtime_resolver();
  void* begin = resolve(runtime, "cuStreamBeginCaptureToGraph");
  void* begin_ptsz = resolve(runtime, "cuStreamBeginCaptureToGraph",
                             CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  void* free = resolve(runtime, "cuMemFree", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  CHECK(begin != reinterpret_cast<void*>(&fake_six));
  CHECK(begin_ptsz != reinterpret_cast<void*>(&fake_six));
  CHECK(begin_ptsz != begin);                          // the per-thread twin's own guard
  CHECK(free != reinterpret_cast<void*>(&fake_free));  // no twin: the legacy guard
  CHECK(resolve(runtime, "cuCtxGetCurrent") == reinterpret_cast<void*>(&fake_resolve));
  CHECK(launch_hooks::answer_dlsym("cuMemFree_v2", reinterpret_cast<void*>(&fake_free),
                                   reinterpret_cast<const void*>(&resolve)) != nullptr);
  CHECK(launch_hooks::answer_dlsym("cuCtxGetCurrent", reinterpret_cast<void*>(&fake_free),
                                   reinterpret_cast<const void*>(&resolve)) == nullptr);
  CHECK(guards::unwrapped() == 0);
  CHECK(guards::any_wrapped());
}

TEST_CASE("attach guards: six registers forwarded unchanged, the result's 32 bits returned") {
  guards::reset_for_tests();
  listen_fakes();
  const auto begin =
      reinterpret_cast<Forward>(resolve(runtime_resolver(), "cuStreamBeginCaptureToGraph"));
  g_calls.clear();
  const uintptr_t result = begin(0x5000, 0x6000, 0x7000, 0x8000, 3, CU_STREAM_CAPTURE_MODE_RELAXED);
  CHECK(static_cast<uint32_t>(result) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  REQUIRE(g_calls.size() == 1);
  CHECK(g_calls[0] ==
        std::vector<uintptr_t>{0x5000, 0x6000, 0x7000, 0x8000, 3, CU_STREAM_CAPTURE_MODE_RELAXED});
  CHECK(g_seen.attaches == 0);  // attached: straight through
  CHECK(guards::in_flight() == 0);
}

TEST_CASE("attach guards: a call the reduced set records attaches CUPTI first") {
  guards::reset_for_tests();
  listen_fakes();
  const auto free = reinterpret_cast<Forward>(resolve(runtime_resolver(), "cuMemFree"));
  g_calls.clear();
  guards::state().store(guards::State::Detached);
  CHECK(free(0x1234, 0, 0, 0, 0, 0) == CUDA_SUCCESS);
  CHECK(g_seen.attaches == 1);
  CHECK(guards::state().load() == guards::State::Attached);
  REQUIRE(g_calls.size() == 1);
  CHECK(g_calls[0][0] == 0x1234);
  CHECK(guards::in_flight() == 0);

  // CUPTI refuses: the program's call still goes through.
  g_seen.attach_succeeds = false;
  guards::state().store(guards::State::Detached);
  CHECK(free(0x5678, 0, 0, 0, 0, 0) == CUDA_SUCCESS);
  CHECK(g_seen.attaches == 2);
  CHECK(g_calls.size() == 2);
  CHECK(guards::in_flight() == 0);
  guards::state().store(guards::State::Attached);
}

TEST_CASE("attach guards: a failed sync while detached is delivered, nothing else is") {
  guards::reset_for_tests();
  listen_fakes();
  const auto sync = reinterpret_cast<Forward>(resolve(runtime_resolver(), "cuStreamSynchronize"));
  g_sync_result = 0;
  guards::state().store(guards::State::Detached);
  CHECK(sync(0x5000, 0, 0, 0, 0, 0) == 0);
  CHECK(g_seen.failed_syncs.empty());
  g_sync_result = CUDA_ERROR_ILLEGAL_ADDRESS;
  CHECK(sync(0x5000, 0, 0, 0, 0, 0) == CUDA_ERROR_ILLEGAL_ADDRESS);
  REQUIRE(g_seen.failed_syncs.size() == 1);
  CHECK(g_seen.failed_syncs[0].first == guards::k_cuStreamSynchronize);
  CHECK(g_seen.failed_syncs[0].second == 0x5000);
  CHECK(g_seen.attaches == 0);  // no attach after a sticky error
  guards::state().store(guards::State::Attached);
  CHECK(sync(0x5000, 0, 0, 0, 0, 0) == CUDA_ERROR_ILLEGAL_ADDRESS);
  CHECK(g_seen.failed_syncs.size() == 1);  // attached: CUPTI's own callback has it
  g_sync_result = 0;
}

TEST_CASE("attach guards: graph launches beat every period-th call") {
  guards::reset_for_tests();
  listen_fakes(4);
  const auto launch = reinterpret_cast<Forward>(resolve(runtime_resolver(), "cuGraphLaunch"));
  for (int i = 0; i < 9; ++i) launch(1, 2, 0, 0, 0, 0);
  CHECK(g_seen.heartbeats == 2);  // the first call, then every fifth (countdown from 4)
}

// The idle detach against a fake clock, thread and CUPTI.
struct FakeCupti {
  uint64_t now = 1'000'000'000;
  uint32_t tid = 7;
  bool may = true, detach_ok = true, attach_ok = true;
  int detaches = 0, attaches = 0;
  uint64_t activity = 0;  // records written
} g_cupti;

idle_detach::Config fake_config(uint64_t idle_ns) {
  g_cupti = FakeCupti{};
  idle_detach::Config config;
  config.idle_ns = idle_ns;
  config.clock = [] { return g_cupti.now; };
  config.thread_id = [] { return g_cupti.tid; };
  config.activity = [] { return g_cupti.activity; };
  config.why_not = [] { return g_cupti.may ? nullptr : "not now"; };
  config.detach = [] {
    ++g_cupti.detaches;
    return g_cupti.detach_ok;
  };
  config.attach = [] {
    ++g_cupti.attaches;
    return g_cupti.attach_ok;
  };
  return config;
}

void reset_detach() {
  guards::reset_for_tests();
  idle_detach::reset_for_tests();
}

TEST_CASE("idle detach: after a quiet window on one thread, and attached again when needed") {
  reset_detach();
  idle_detach::start(fake_config(50'000'000));
  idle_detach::on_heartbeat();  // opens the window
  g_cupti.now += 40'000'000;
  idle_detach::on_heartbeat();
  CHECK(g_cupti.detaches == 0);
  ++g_cupti.activity;  // a recorded call: a new window
  g_cupti.now += 20'000'000;
  idle_detach::on_heartbeat();
  g_cupti.now += 40'000'000;
  idle_detach::on_heartbeat();
  CHECK(g_cupti.detaches == 0);
  g_cupti.tid = 8;  // another thread replays: a new window
  g_cupti.now += 20'000'000;
  idle_detach::on_heartbeat();
  CHECK(g_cupti.detaches == 0);
  g_cupti.now += 50'000'000;
  idle_detach::on_heartbeat();
  CHECK(g_cupti.detaches == 1);
  CHECK(guards::state().load() == guards::State::Detached);
  CHECK(idle_detach::detaches() == 1);

  idle_detach::on_attach_needed();
  CHECK(g_cupti.attaches == 1);
  CHECK(guards::state().load() == guards::State::Attached);
  // Attached again soon: the next detach asks for twice the quiet time.
  idle_detach::on_heartbeat();
  g_cupti.now += 60'000'000;
  idle_detach::on_heartbeat();
  CHECK(g_cupti.detaches == 1);
  g_cupti.now += 40'000'000;
  idle_detach::on_heartbeat();
  CHECK(g_cupti.detaches == 2);
}

TEST_CASE("idle detach: an idle time of 0 doubles to 1 ms after a detach that ended soon") {
  reset_detach();
  idle_detach::start(fake_config(0));
  idle_detach::on_heartbeat();  // idle 0: at the first quiet heartbeat
  CHECK(g_cupti.detaches == 1);
  idle_detach::on_attach_needed();  // at once: soon
  idle_detach::on_heartbeat();      // a new window, 1 ms long now
  CHECK(g_cupti.detaches == 1);
  g_cupti.now += 999'999;
  idle_detach::on_heartbeat();
  CHECK(g_cupti.detaches == 1);
  g_cupti.now += 1;
  idle_detach::on_heartbeat();
  CHECK(g_cupti.detaches == 2);
  idle_detach::on_attach_needed();
  idle_detach::on_heartbeat();
  g_cupti.now += 1'999'999;
  idle_detach::on_heartbeat();
  CHECK(g_cupti.detaches == 2);  // 2 ms now
  g_cupti.now += 1;
  idle_detach::on_heartbeat();
  CHECK(g_cupti.detaches == 3);
}

TEST_CASE("idle detach: not while why_not says no, nor after CUPTI refused to attach") {
  reset_detach();
  idle_detach::start(fake_config(0));
  g_cupti.may = false;
  idle_detach::on_heartbeat();
  idle_detach::on_heartbeat();
  CHECK(g_cupti.detaches == 0);
  g_cupti.may = true;
  ++g_cupti.activity;
  idle_detach::on_heartbeat();  // idle 0: at the first quiet heartbeat
  CHECK(g_cupti.detaches == 1);
  g_cupti.attach_ok = false;
  idle_detach::on_attach_needed();
  CHECK(guards::state().load() == guards::State::Detached);
  idle_detach::on_attach_needed();
  CHECK(g_cupti.attaches == 1);  // given up: never asked again
  // A refused detach leaves CUPTI attached.
  reset_detach();
  idle_detach::start(fake_config(0));
  g_cupti.detach_ok = false;
  idle_detach::on_heartbeat();
  CHECK(g_cupti.detaches == 1);
  CHECK(guards::state().load() == guards::State::Attached);
}

TEST_CASE("idle detach: waits for an Attach call in flight, which then attaches nothing") {
  reset_detach();
  idle_detach::start(fake_config(0));
  const auto free = reinterpret_cast<Forward>(resolve(runtime_resolver(), "cuMemFree"));
  g_hold.store(true);
  std::thread caller([&] { free(0x42, 0, 0, 0, 0, 0); });
  while (!g_holding.load()) std::this_thread::yield();
  CHECK(guards::in_flight() == 1);
  std::thread detacher([] { idle_detach::on_heartbeat(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(g_cupti.detaches == 0);  // the free is still inside
  g_hold.store(false);
  caller.join();
  detacher.join();
  CHECK(g_cupti.detaches == 1);
  CHECK(g_cupti.attaches == 0);
  CHECK(guards::state().load() == guards::State::Detached);
  free(0x43, 0, 0, 0, 0, 0);  // the next one attaches first
  CHECK(g_cupti.attaches == 1);
  reset_detach();
}

// One fact, two lists: every driver function the reduced set records outside captures (an
// `outside` kind, or the memory column) has an Attach guard under its resolver name.
struct CatalogRow {
  std::string name, kind;
};
const std::vector<CatalogRow> kCatalog = {
#define CAPGUARD_API(base, kind, stream) {#base, #kind},
#include "trace/api_catalog.def"
#undef CAPGUARD_API
};
const std::set<std::string> kMemory = {
#define CAPGUARD_API(base, kind, stream)
#define CAPGUARD_API_MEMORY(base, op, pointer, direction, size) #base,
#include "trace/api_catalog.def"
#undef CAPGUARD_API
#undef CAPGUARD_API_MEMORY
};
const std::set<std::string> kOutsideKinds = {
#define CAPGUARD_API_KIND(kind, name, outside) outside ? #kind : "",
#include "trace/api_kinds.def"
#undef CAPGUARD_API_KIND
};

TEST_CASE("attach guards: every driver function recorded outside captures is guarded") {
  std::set<std::string> guarded;
  for (int g = 0; g < guards::kGuardCount; ++g) {
    if (guards::role_of(g) == guards::Role::Attach) {
      std::string name = guards::exported_name(g);
      for (const char* suffix : {"_ptsz", "_v2"}) {
        const size_t at = name.rfind(suffix);
        if (at != std::string::npos && at + std::strlen(suffix) == name.size()) name.resize(at);
      }
      guarded.insert(name);
    }
  }
  std::set<std::string> needed;
  for (const CatalogRow& row : kCatalog) {
    if (row.name.rfind("cuda", 0) == 0 || row.name.rfind("cu", 0) != 0) continue;
    if (kOutsideKinds.count(row.kind) != 0 || kMemory.count(row.name) != 0) needed.insert(row.name);
  }
  for (const std::string& name : kMemory) {
    if (name.rfind("cuda", 0) != 0) needed.insert(name);
  }
  for (const std::string& name : needed) {
    INFO(name);
    CHECK(guarded.count(name) == 1);
  }
  for (const std::string& name : guarded) {
    INFO(name);
    CHECK(needed.count(name) == 1);  // nothing guarded that the reduced set does not record
  }
}

}  // namespace
}  // namespace capguard::interposer
