// The launch hooks against a fake libcuda: what the resolvers and dlsym hand out, that
// a trampoline calls straight through while the gate is reduced, and that while it delivers it
// hands the recorder what CUPTI's callback would have: the runtime's name, callback id and
// params for the runtime's own launches, the driver's for everyone else's.
#include <cupti.h>
#include <doctest/doctest.h>

#include <vector>

#include "interposer/api_table.h"
#include "interposer/decode.h"
#include "interposer/launch_hooks.h"
#include "tests/recorder_harness.h"

namespace capguard::interposer {
namespace {

namespace hooks = launch_hooks;

struct Launched {
  CUstream stream;
  const CUlaunchConfig* config;
};
std::vector<Launched> g_launched;
CUresult g_launch_result = CUDA_SUCCESS;  // what fake_launch answers

CUresult fake_launch(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     unsigned, CUstream stream, void**, void**) {
  g_launched.push_back({stream, nullptr});
  return g_launch_result;
}
CUresult fake_launch_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                          unsigned, CUstream stream, void**, void**) {
  g_launched.push_back({stream, nullptr});
  return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
}
CUresult fake_launch_ex(const CUlaunchConfig* config, CUfunction, void**, void**) {
  g_launched.push_back({config->hStream, config});
  return CUDA_SUCCESS;
}

CUresult fake_resolve_v2(const char* symbol, void** pfn, int, cuuint64_t flags,
                         CUdriverProcAddressQueryResult*);
CUresult fake_resolve_v2(const char* symbol, void** pfn, int, cuuint64_t flags,
                         CUdriverProcAddressQueryResult*) {
  const std::string_view name(symbol);
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  if (name == "cuGetProcAddress")
    *pfn = reinterpret_cast<void*>(&fake_resolve_v2);
  else if (name == "cuLaunchKernel")
    *pfn = per_thread ? reinterpret_cast<void*>(&fake_launch_ptsz)
                      : reinterpret_cast<void*>(&fake_launch);
  else if (name == "cuLaunchKernelEx")
    *pfn = reinterpret_cast<void*>(&fake_launch_ex);
  else
    *pfn = reinterpret_cast<void*>(&fake_resolve_v2);  // any other symbol: not a launch
  return CUDA_SUCCESS;
}

struct Delivered {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  CUpti_ApiCallbackSite site;
  std::string name;
  uint64_t stream;
  int32_t result;
};
std::vector<Delivered> g_delivered;

void CUPTIAPI fake_switchboard(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                               const void* raw) {
  const auto& data = *static_cast<const CUpti_CallbackData*>(raw);
  const trace::ApiDomain d =
      domain == CUPTI_CB_DOMAIN_RUNTIME_API ? trace::ApiDomain::Runtime : trace::ApiDomain::Driver;
  const CallbackInfo& info = api_info(d, cbid);
  uint64_t stream = 0;
  decode_stream(info, data.functionParams, stream);
  g_delivered.push_back({domain, cbid, data.callbackSite, data.functionName, stream,
                         decode_result(info, data.functionReturnValue)});
}

using ResolveV2 = CUresult (*)(const char*, void**, int, cuuint64_t,
                               CUdriverProcAddressQueryResult*);
using Launch = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void**, void**);
using LaunchEx = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);

void* resolve(ResolveV2 resolver, const char* symbol, int version, cuuint64_t flags = 0) {
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult status{};
  REQUIRE(resolver(symbol, &pfn, version, flags, &status) == CUDA_SUCCESS);
  return pfn;
}

const auto kStream = reinterpret_cast<CUstream>(0x5000);

TEST_CASE("launch hooks: wrapped through every resolver, delivered only while the gate is full") {
  hooks::enable(0, 0);
  hooks::deliver_to(&fake_switchboard, nullptr, nullptr);
  const void* caller = reinterpret_cast<const void*>(&resolve);
  // What a CUDA runtime does: dlsym the resolver, resolve cuGetProcAddress through it, then its
  // table through that.
  auto driver_resolver = reinterpret_cast<ResolveV2>(hooks::answer_dlsym(
      "cuGetProcAddress_v2", reinterpret_cast<void*>(&fake_resolve_v2), caller));
  REQUIRE(reinterpret_cast<void*>(driver_resolver) != nullptr);
  CHECK(reinterpret_cast<void*>(driver_resolver) != reinterpret_cast<void*>(&fake_resolve_v2));
  auto runtime_resolver =
      reinterpret_cast<ResolveV2>(resolve(driver_resolver, "cuGetProcAddress", 12000));
  CHECK(reinterpret_cast<void*>(runtime_resolver) != reinterpret_cast<void*>(&fake_resolve_v2));
  CHECK(reinterpret_cast<void*>(runtime_resolver) != reinterpret_cast<void*>(driver_resolver));
  auto runtime_launch =
      reinterpret_cast<Launch>(resolve(runtime_resolver, "cuLaunchKernel", 12000));
  auto runtime_launch_ptsz = reinterpret_cast<Launch>(resolve(
      runtime_resolver, "cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
  auto runtime_launch_ex =
      reinterpret_cast<LaunchEx>(resolve(runtime_resolver, "cuLaunchKernelEx", 12000));
  CHECK(reinterpret_cast<void*>(runtime_launch) != reinterpret_cast<void*>(&fake_launch));
  CHECK(reinterpret_cast<void*>(runtime_launch_ptsz) != reinterpret_cast<void*>(&fake_launch_ptsz));
  CHECK(resolve(runtime_resolver, "cuCtxGetCurrent", 12000) ==
        reinterpret_cast<void*>(&fake_resolve_v2));
  // A program that dlsyms the driver symbol itself (JAX).
  auto driver_launch = reinterpret_cast<Launch>(
      hooks::answer_dlsym("cuLaunchKernel", reinterpret_cast<void*>(&fake_launch), caller));
  REQUIRE(reinterpret_cast<void*>(driver_launch) != nullptr);
  CHECK(hooks::answer_dlsym("cuCtxGetCurrent", reinterpret_cast<void*>(&fake_launch), caller) ==
        nullptr);
  CHECK(hooks::unwrapped() == 0);

  g_launched.clear();
  g_delivered.clear();
  hooks::delivering().store(false);
  CHECK(runtime_launch(nullptr, 1, 1, 1, 1, 1, 1, 0, kStream, nullptr, nullptr) == CUDA_SUCCESS);
  CHECK(g_launched.size() == 1);
  CHECK(g_delivered.empty());  // reduced: straight through, as CUPTI's switched-off callback

  hooks::delivering().store(true);
  CHECK(runtime_launch(nullptr, 1, 1, 1, 1, 1, 1, 0, kStream, nullptr, nullptr) == CUDA_SUCCESS);
  REQUIRE(g_delivered.size() == 2);
  CHECK(g_delivered[0].site == CUPTI_API_ENTER);
  CHECK(g_delivered[1].site == CUPTI_API_EXIT);
  CHECK(g_delivered[1].domain == CUPTI_CB_DOMAIN_RUNTIME_API);
  CHECK(g_delivered[1].cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  CHECK(g_delivered[1].name == "cudaLaunchKernel");
  CHECK(g_delivered[1].stream == 0x5000);

  g_delivered.clear();
  CHECK(runtime_launch_ptsz(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr) ==
        CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
  REQUIRE(g_delivered.size() == 2);
  CHECK(g_delivered[1].cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000);
  CHECK(g_delivered[1].name == "cudaLaunchKernel_ptsz");
  CHECK(g_delivered[1].result == CUDA_ERROR_STREAM_CAPTURE_ISOLATION);

  g_delivered.clear();
  CUlaunchConfig config{};
  config.hStream = kStream;
  CHECK(runtime_launch_ex(&config, nullptr, nullptr, nullptr) == CUDA_SUCCESS);
  REQUIRE(g_delivered.size() == 2);
  CHECK(g_delivered[1].name == "cudaLaunchKernelExC");
  CHECK(g_delivered[1].stream == 0x5000);  // read through the runtime's launch config

  g_delivered.clear();
  CHECK(driver_launch(nullptr, 1, 1, 1, 1, 1, 1, 0, kStream, nullptr, nullptr) == CUDA_SUCCESS);
  REQUIRE(g_delivered.size() == 2);
  CHECK(g_delivered[1].domain == CUPTI_CB_DOMAIN_DRIVER_API);
  CHECK(g_delivered[1].cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
  CHECK(g_delivered[1].name == "cuLaunchKernel");
  CHECK(g_delivered[1].stream == 0x5000);
  hooks::delivering().store(false);
}

TEST_CASE("launch hooks: a call made already is delivered as CUPTI's ENTER and EXIT") {
  hooks::deliver_to(&fake_switchboard, nullptr, nullptr);
  g_delivered.clear();
  const uintptr_t params[1] = {0x5000};  // cuStreamSynchronize's: the stream
  hooks::deliver_made_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
                           "cuStreamSynchronize", params, CUDA_ERROR_ILLEGAL_ADDRESS);
  REQUIRE(g_delivered.size() == 2);
  CHECK(g_delivered[0].site == CUPTI_API_ENTER);
  CHECK(g_delivered[1].site == CUPTI_API_EXIT);
  CHECK(g_delivered[1].name == "cuStreamSynchronize");
  CHECK(g_delivered[1].stream == 0x5000);
  CHECK(g_delivered[1].result == CUDA_ERROR_ILLEGAL_ADDRESS);
}

TEST_CASE("launch hooks: CUPTI's own callbacks for the launch family are dropped while owned") {
  hooks::deliver_to(&fake_switchboard, nullptr, nullptr);
  hooks::set_owning(false);
  CHECK_FALSE(
      hooks::owns(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  hooks::set_owning(true);
  CHECK(hooks::owns(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  CHECK(hooks::owns(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz));
  CHECK_FALSE(
      hooks::owns(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000));
  CHECK_FALSE(hooks::owns(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2));
  size_t count = 0;
  CHECK(hooks::runtime_callback_ids(count) != nullptr);
  CHECK(count == 6);
  hooks::set_owning(false);
}

// A CUDA runtime's cuLaunchKernel: the resolver dlsym hands out, cuGetProcAddress resolved
// through it, the launch through that.
Launch runtime_launch_through_hooks() {
  hooks::enable(0, 0);
  const auto driver_resolver = reinterpret_cast<ResolveV2>(
      hooks::answer_dlsym("cuGetProcAddress_v2", reinterpret_cast<void*>(&fake_resolve_v2),
                          reinterpret_cast<const void*>(&resolve)));
  const auto runtime_resolver =
      reinterpret_cast<ResolveV2>(resolve(driver_resolver, "cuGetProcAddress", 12000));
  return reinterpret_cast<Launch>(resolve(runtime_resolver, "cuLaunchKernel", 12000));
}

TEST_CASE("launches the launch hooks deliver are recorded as CUPTI's callbacks recorded them") {
  namespace rh = recorder_harness;
  const Launch hooked = runtime_launch_through_hooks();
  // The same program twice: launches by CUPTI's callbacks, then by the hooks.
  std::vector<rh::RecordingSink> traces;
  for (const bool by_hooks : {false, true}) {
    rh::TempDir dir;
    auto r = rh::make_recorder(dir);
    hooks::deliver_to(&Recorder::hooked_switchboard, r.get(), &Recorder::on_open_origin);
    hooks::set_owning(by_hooks);
    hooks::delivering().store(by_hooks);
    g_launched.clear();
    const auto launch_on = [&](uint64_t stream, int32_t result) {
      g_launch_result = static_cast<CUresult>(result);
      if (by_hooks) {
        hooked(nullptr, 1, 1, 1, 1, 1, 1, 0, rh::as<CUstream>(stream), nullptr, nullptr);
      } else {
        rh::launch(*r, stream, false, result);
      }
    };
    rh::begin_capture(*r, rh::kStream, 7);
    launch_on(rh::kStream, 0);  // the body: nothing delivered
    rh::fork_into_capture(rh::kForked, 7);
    launch_on(rh::kForked, 0);
    launch_on(rh::kStream, 901);  // a failure on the origin
    rh::end_capture(*r, rh::kStream, 0x8000);
    if (by_hooks) CHECK(g_launched.size() == 3);
    hooks::delivering().store(false);
    hooks::set_owning(false);
    g_launch_result = CUDA_SUCCESS;
    traces.push_back(rh::read_back(*r));
  }
  REQUIRE(rh::api_names(traces[1]) == rh::api_names(traces[0]));
  REQUIRE(rh::api_names(traces[0]) ==
          std::vector<std::string>{"cudaStreamBeginCapture", "cudaLaunchKernel", "cudaLaunchKernel",
                                   "cudaStreamEndCapture"});
  for (size_t i = 0; i < traces[0].events.size(); ++i) {
    const trace::ApiEvent& cupti = traces[0].events[i];
    const trace::ApiEvent& by_hooks = traces[1].events[i];
    CHECK(by_hooks.domain == cupti.domain);
    CHECK(by_hooks.stream == cupti.stream);
    CHECK(by_hooks.result == cupti.result);
    CHECK(by_hooks.status_after == cupti.status_after);
    CHECK(by_hooks.capture_id == cupti.capture_id);
    CHECK(by_hooks.fields == cupti.fields);
  }
}

TEST_CASE("while the hooks own the launches, CUPTI's own launch callbacks are dropped") {
  namespace rh = recorder_harness;
  rh::TempDir dir;
  auto r = rh::make_recorder(dir);
  hooks::deliver_to(&Recorder::hooked_switchboard, r.get(), &Recorder::on_open_origin);
  hooks::set_owning(true);
  rh::begin_capture(*r, rh::kStream, 7);
  rh::fork_into_capture(rh::kForked, 7);
  rh::launch(*r, rh::kForked);  // by CUPTI, while a domain was on whole: the hooks deliver it
  rh::end_capture(*r, rh::kStream, 0x8000);
  hooks::set_owning(false);
  CHECK(rh::api_names(rh::read_back(*r)) ==
        std::vector<std::string>{"cudaStreamBeginCapture", "cudaStreamEndCapture"});
}

}  // namespace
}  // namespace capguard::interposer
