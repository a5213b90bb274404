// The callback gate against a fake CUPTI that keeps the enabled state per (domain, cbid): what
// is on outside captures, that a BeginCapture turns everything on before its call proceeds,
// and that after the last capture and its linger the next EXIT reduces everything at once.
#include <cupti.h>
#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <utility>

#include "interposer/api_table.h"
#include "interposer/callback_gate.h"

namespace capguard::interposer {
namespace {

struct FakeCupti {
  std::map<std::pair<int, uint32_t>, bool> on;  // (domain, cbid) -> enabled
  int domain_enables = 0;
};
FakeCupti g_cupti;

CUptiResult fake_enable_domain(uint32_t enable, CUpti_SubscriberHandle,
                               CUpti_CallbackDomain domain) {
  ++g_cupti.domain_enables;
  const uint32_t size = api_table_size(
      domain == CUPTI_CB_DOMAIN_RUNTIME_API ? trace::ApiDomain::Runtime : trace::ApiDomain::Driver);
  for (uint32_t cbid = 1; cbid < size; ++cbid) g_cupti.on[{domain, cbid}] = enable != 0;
  return CUPTI_SUCCESS;
}

CUptiResult fake_enable_callback(uint32_t enable, CUpti_SubscriberHandle,
                                 CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  g_cupti.on[{domain, cbid}] = enable != 0;
  return CUPTI_SUCCESS;
}

bool on(CUpti_CallbackDomain domain, uint32_t cbid) {
  const auto it = g_cupti.on.find({domain, cbid});
  return it != g_cupti.on.end() && it->second;
}

uint64_t g_now_ns = 0;
uint64_t fake_clock() { return g_now_ns; }

void start(CallbackGate& gate, bool always_full = false, uint64_t linger_ns = 0) {
  g_cupti = FakeCupti{};
  g_now_ns = 1'000'000;
  CuptiSwitches switches;
  switches.enable_domain = &fake_enable_domain;
  switches.enable_callback = &fake_enable_callback;
  gate.init(switches, always_full, linger_ns, &fake_clock);
  REQUIRE(gate.enable_reduced_set());
}

bool never_needed(const void*) { return false; }
bool still_needed(const void*) { return true; }

constexpr auto kRuntime = CUPTI_CB_DOMAIN_RUNTIME_API;
constexpr uint32_t kThread = 7, kOtherThread = 8;
constexpr auto kDriver = CUPTI_CB_DOMAIN_DRIVER_API;

TEST_CASE("outside captures only the calls recorded there reach the interposer") {
  CallbackGate gate;
  start(gate);
  CHECK_FALSE(gate.full());
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000));
  CHECK(on(kDriver, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2));
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000));
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaThreadExchangeStreamCaptureMode_v10010));
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaEventCreateWithFlags_v3020));
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v5050));
  CHECK_FALSE(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000));  // replay loops
  CHECK_FALSE(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  CHECK_FALSE(on(kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  CHECK_FALSE(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
  // The single source of truth: every call with a role, and nothing else.
  for (uint32_t cbid = 1; cbid < api_table_size(trace::ApiDomain::Driver); ++cbid) {
    CHECK(on(kDriver, cbid) ==
          callback_needed_outside_capture(api_info(trace::ApiDomain::Driver, cbid)));
  }
}

TEST_CASE("a capture beginning turns every callback on; after its end they go all at once") {
  CallbackGate gate;
  start(gate);
  gate.want_full();
  CHECK(gate.full());
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  CHECK(on(kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  // While a capture is open, EXITs switch nothing off.
  gate.on_exit_while_full(kThread);
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));

  gate.allow_reduced(&still_needed, nullptr, kThread);  // another thread's capture is still open
  CHECK(gate.full());
  const uint32_t generation = gate.reduction_generation();
  gate.allow_reduced(&never_needed, nullptr, kThread);  // linger 0: reduced at once
  CHECK_FALSE(gate.full());
  CHECK(gate.reduced_since(generation));
  CHECK_FALSE(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  CHECK_FALSE(on(kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000));  // the reduced set
  CHECK(gate.switched_on() == 1);
  CHECK(gate.reductions() == 1);

  const int enables = g_cupti.domain_enables;
  gate.want_full();  // the next capture: everything back on
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  CHECK(g_cupti.domain_enables == enables + 2);
  CHECK_FALSE(gate.reduced_since(gate.reduction_generation()));
}

TEST_CASE("CAPGUARD_CALLBACKS=all keeps every callback on, captures or not") {
  CallbackGate gate;
  start(gate, /*always_full=*/true);
  CHECK(gate.full());
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  gate.allow_reduced(&never_needed, nullptr, kThread);
  gate.on_exit_while_full(kThread);
  CHECK(gate.full());
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
}

// cudaLaunchKernel and cuLaunchKernel handed to the launch hooks (launch_hooks.h).
constexpr uint32_t kHandedRuntime[] = {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000};
constexpr uint32_t kHandedDriver[] = {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel};
int g_given_back = 0;

void hand_launch_off(CallbackGate& gate, std::atomic<bool>& delivering) {
  g_given_back = 0;
  CallbackGate::HandOff hand_off;
  hand_off.runtime_ids = kHandedRuntime;
  hand_off.runtime_count = 1;
  hand_off.driver_ids = kHandedDriver;
  hand_off.driver_count = 1;
  hand_off.delivering = &delivering;
  hand_off.given_back = [] { ++g_given_back; };
  gate.hand_off(hand_off);
}

TEST_CASE("callbacks handed to the launch hooks stay off, and the hooks deliver while full") {
  std::atomic<bool> delivering{false};
  CallbackGate gate;
  hand_launch_off(gate, delivering);
  start(gate);
  CHECK_FALSE(delivering.load());
  gate.want_full();
  CHECK(gate.full());
  CHECK(delivering.load());
  CHECK_FALSE(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  CHECK_FALSE(on(kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  CHECK(on(kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz));  // not handed off
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
  gate.allow_reduced(&never_needed, nullptr, kThread);  // linger 0: reduces now
  CHECK_FALSE(gate.full());
  CHECK_FALSE(delivering.load());
  CHECK_FALSE(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  CHECK(g_given_back == 0);
}

CUptiResult refusing_enable_callback(uint32_t enable, CUpti_SubscriberHandle handle,
                                     CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (enable == 0 && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) return CUPTI_ERROR_UNKNOWN;
  return fake_enable_callback(enable, handle, domain, cbid);
}

TEST_CASE("when CUPTI refuses to switch a handed-off callback off, CUPTI delivers them again") {
  std::atomic<bool> delivering{false};
  CallbackGate gate;
  hand_launch_off(gate, delivering);
  g_cupti = FakeCupti{};
  CuptiSwitches switches;
  switches.enable_domain = &fake_enable_domain;
  switches.enable_callback = &refusing_enable_callback;
  gate.init(switches, false, 0, &fake_clock);
  REQUIRE(gate.enable_reduced_set());
  gate.want_full();
  CHECK(gate.full());
  CHECK_FALSE(delivering.load());
  CHECK(g_given_back == 1);
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  CHECK(on(kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  CHECK_FALSE(gate.handed_off(trace::ApiDomain::Driver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
}

}  // namespace
TEST_CASE("back-to-back captures keep everything on; the gate reduces only after the linger") {
  CallbackGate gate;
  start(gate, false, /*linger_ns=*/1000);
  constexpr uint32_t kLaunch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  gate.want_full();
  gate.allow_reduced(&never_needed, nullptr, kThread);  // the capture ended
  g_now_ns += 999;
  gate.on_exit_while_full(kThread);
  CHECK(gate.full());  // still lingering
  CHECK(on(kRuntime, kLaunch));

  const int enables = g_cupti.domain_enables;
  gate.want_full();  // the next capture within the linger: nothing to switch
  CHECK(g_cupti.domain_enables == enables);
  gate.allow_reduced(&never_needed, nullptr, kThread);
  g_now_ns += 1000;
  gate.on_exit_while_full(kThread);
  CHECK_FALSE(gate.full());
  CHECK_FALSE(on(kRuntime, kLaunch));

  // A capture open in another thread when the linger ends: nothing is reduced.
  gate.want_full();
  gate.allow_reduced(&still_needed, nullptr, kThread);
  g_now_ns += 5000;
  gate.on_exit_while_full(kThread);
  CHECK(gate.full());
}

TEST_CASE("another thread calling CUDA after the capture keeps every callback on") {
  CallbackGate gate;
  start(gate, false, /*linger_ns=*/1000);
  gate.want_full();
  gate.allow_reduced(&never_needed, nullptr, kThread);  // the capture ended on kThread
  gate.on_exit_while_full(kOtherThread);                // a worker is busy with CUDA
  g_now_ns += 5000;
  gate.on_exit_while_full(kThread);
  CHECK(gate.full());  // switching off under a busy thread can blind it for good
  CHECK(gate.reductions() == 0);

  gate.want_full();  // the next capture starts afresh
  gate.allow_reduced(&never_needed, nullptr, kThread);
  g_now_ns += 5000;
  gate.on_exit_while_full(kThread);
  CHECK_FALSE(gate.full());
}

TEST_CASE(
    "graph lifetime: the reduced set holds what the graph watch wants, re-applied on demand") {
  CallbackGate gate;
  start(gate);
  bool launches = false;
  gate.set_also_wanted(
      [](const CallbackInfo& info, const void* wanted) {
        return info.kind == ApiKind::GraphLaunch && *static_cast<const bool*>(wanted);
      },
      &launches);
  // Allocations and frees are in the reduced set by the catalog's memory column.
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020));
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020));
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaGraphExecDestroy_v10000));
  CHECK_FALSE(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000));
  launches = true;  // a new exec: its first launches are wanted
  gate.reapply_reduced_set();
  CHECK_FALSE(gate.full());
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000));
  CHECK(on(kDriver, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch));
  CHECK_FALSE(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  // Not wanted any more: it stays on until the gate reduces, all at once, after a capture.
  launches = false;
  gate.reapply_reduced_set();
  CHECK(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000));
  gate.want_full();
  gate.allow_reduced(&never_needed, nullptr, kThread);
  CHECK_FALSE(gate.full());
  CHECK_FALSE(on(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000));
  // While everything is on, re-applying changes nothing.
  gate.want_full();
  launches = true;
  gate.reapply_reduced_set();
  CHECK(gate.full());
}

}  // namespace capguard::interposer
