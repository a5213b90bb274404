// CUDA 12's parameter layouts, compiled against CUDA 12's CUPTI headers alone: the
// calls CUDA 13.0 dropped but 12.x programs make are decoded from 12.x's params structs, whichever
// major was selected (a process may hold both runtimes).
#include <cupti.h>  // CUDA 12.9's, from scripts/cuda12_toolchain.sh --headers-only
#include <doctest/doctest.h>

#include "interposer/api_table.h"
#include "interposer/decode.h"

static_assert(CUDA_VERSION / 1000 == 12, "compiled against CUDA 12's headers");

namespace capguard::interposer {
namespace {

using trace::ApiDomain;

template <typename T>
T handle(uintptr_t value) {
  return reinterpret_cast<T>(value);
}

TEST_CASE(
    "CUDA 12: cudaStreamGetCaptureInfo (_v2, gone from 13.0) is a capture query on its stream") {
  cudaStreamGetCaptureInfo_v2_v11030_params p{};
  p.stream = handle<cudaStream_t>(0x5100);
  for (int major : {12, 13}) {
    select_api_major(major);
    const CallbackInfo& info =
        api_info(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_v11030);
    CAPTURE(major);
    CHECK(info.kind == ApiKind::CaptureQuery);
    uint64_t stream = 0;
    REQUIRE(decode_stream(info, &p, stream));
    CHECK(stream == 0x5100);
  }
  select_api_major(13);
}

TEST_CASE("CUDA 12: the edge-data forms keep their 12.x names and 13.0's layout") {
  select_api_major(12);
  const CallbackInfo& v3 =
      api_info(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v3_v12030);
  CHECK(std::string_view(v3.name) == "cudaStreamGetCaptureInfo_v3_v12030");
  cudaStreamGetCaptureInfo_v3_v12030_params p{};
  p.stream = handle<cudaStream_t>(0x5200);
  uint64_t stream = 0;
  REQUIRE(decode_stream(v3, &p, stream));
  CHECK(stream == 0x5200);
  select_api_major(13);
}

TEST_CASE("CUDA 12: calls 13.0 dropped are still decoded (prefetch, semaphores)") {
  select_api_major(12);
  cudaMemPrefetchAsync_v8000_params prefetch{};
  prefetch.stream = handle<cudaStream_t>(0x5300);
  const CallbackInfo& info =
      api_info(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaMemPrefetchAsync_v8000);
  CHECK(info.kind == ApiKind::Enqueue);
  uint64_t stream = 0;
  REQUIRE(decode_stream(info, &prefetch, stream));
  CHECK(stream == 0x5300);
  cudaWaitExternalSemaphoresAsync_v10000_params wait{};
  wait.stream = handle<cudaStream_t>(0x5400);
  REQUIRE(decode_stream(
      api_info(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaWaitExternalSemaphoresAsync_v10000),
      &wait, stream));
  CHECK(stream == 0x5400);
  select_api_major(13);
}

TEST_CASE("CUDA 12: begin and end capture, launches and graph launches decode as in 13") {
  select_api_major(12);
  cudaStreamBeginCapture_v10000_params begin{};
  begin.stream = handle<cudaStream_t>(0x5500);
  begin.mode = cudaStreamCaptureModeRelaxed;
  const CallbackInfo& b =
      api_info(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000);
  CHECK(b.kind == ApiKind::BeginCapture);
  trace::ApiEvent event;
  decode_params(b, &begin, 0, event);
  CHECK(event.stream == 0x5500);
  CHECK(static_cast<int>(event.mode) == static_cast<int>(cudaStreamCaptureModeRelaxed));
  cudaGraphLaunch_v10000_params launch{};
  launch.graphExec = handle<cudaGraphExec_t>(0x5600);
  launch.stream = handle<cudaStream_t>(0x5700);
  const CallbackInfo& l =
      api_info(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
  CHECK(l.kind == ApiKind::GraphLaunch);
  CHECK(decode_graph_exec(l, &launch) == 0x5600);
  select_api_major(13);
}

}  // namespace
}  // namespace capguard::interposer
