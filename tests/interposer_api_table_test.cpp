// The generated API table, the parameter decoding it drives and the record policy, on
// fabricated CUPTI params structs (no GPU needed).
#include <cupti.h>
#include <doctest/doctest.h>

#include <string_view>

#include "interposer/api_table.h"
#include "interposer/decode.h"

namespace capguard::interposer {
namespace {

using trace::ApiDomain;
using trace::ApiEvent;
using trace::Field;

const CallbackInfo& runtime(uint32_t cbid) { return api_info(ApiDomain::Runtime, cbid); }
const CallbackInfo& driver(uint32_t cbid) { return api_info(ApiDomain::Driver, cbid); }

template <typename T>
void* handle(T value) {
  return reinterpret_cast<void*>(value);
}

TEST_CASE("every callback id of the CUPTI headers has its entry, named as CUPTI names it") {
  CHECK(std::string_view(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000).name) ==
        "cudaLaunchKernel_v7000");
  CHECK(std::string_view(driver(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2).name) ==
        "cuMemcpyHtoD_v2");
  CHECK(api_table_size(ApiDomain::Runtime) == CUPTI_RUNTIME_TRACE_CBID_SIZE);
  CHECK(api_table_size(ApiDomain::Driver) == CUPTI_DRIVER_TRACE_CBID_SIZE);
}

TEST_CASE("a callback id newer than the headers gets an empty entry, not a crash") {
  const CallbackInfo& unknown = runtime(CUPTI_RUNTIME_TRACE_CBID_SIZE + 100);
  CHECK(unknown.name == nullptr);
  CHECK(unknown.kind == ApiKind::Other);
  CHECK_FALSE(unknown.has(Slot::Stream));
}

TEST_CASE("kinds come from the one catalog, for every variant of the call") {
  CHECK(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000).kind ==
        ApiKind::BeginCapture);
  CHECK(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_ptsz_v10000).kind ==
        ApiKind::BeginCapture);
  CHECK(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_v12030).kind ==
        ApiKind::BeginCapture);
  CHECK(driver(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz).kind == ApiKind::BeginCapture);
  CHECK(driver(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture).kind == ApiKind::EndCapture);
  CHECK(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaThreadExchangeStreamCaptureMode_v10010).kind ==
        ApiKind::ExchangeMode);
  CHECK(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithPriority_v5050).kind ==
        ApiKind::StreamCreate);
  CHECK(driver(CUPTI_DRIVER_TRACE_CBID_cuEventDestroy_v2).kind == ApiKind::EventDestroy);
  CHECK(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithFlags_v11040).kind ==
        ApiKind::GraphInstantiate);
  CHECK(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000).kind == ApiKind::GraphLaunch);
  CHECK(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000).kind == ApiKind::Enqueue);
  CHECK(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000).kind ==
        ApiKind::CaptureQuery);
  CHECK(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020).kind == ApiKind::Other);
}

TEST_CASE("cudaMemcpyAsync: the stream and the copy kind are read from its params") {
  const CallbackInfo& info = runtime(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
  cudaMemcpyAsync_v3020_params params{};
  params.stream = static_cast<cudaStream_t>(handle(0x5000));
  params.kind = cudaMemcpyDeviceToHost;
  ApiEvent event;
  decode_params(info, &params, 0, event);
  CHECK(event.has(Field::Stream));
  CHECK(event.stream == 0x5000);
  CHECK(event.has(Field::CopyKind));
  CHECK(event.copy_kind == cudaMemcpyDeviceToHost);
  CHECK_FALSE(event.has(Field::Event));
  CHECK_FALSE(info.per_thread);
}

TEST_CASE("synchronous cudaMemcpy has a copy kind and no stream") {
  const CallbackInfo& info = runtime(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020);
  cudaMemcpy_v3020_params params{};
  params.kind = cudaMemcpyHostToDevice;
  ApiEvent event;
  decode_params(info, &params, 0, event);
  CHECK_FALSE(event.has(Field::Stream));
  CHECK(event.copy_kind == cudaMemcpyHostToDevice);
}

TEST_CASE("the legacy stream is never queried; NULL in a _ptsz call is the per-thread stream") {
  const CallbackInfo& plain = runtime(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  const CallbackInfo& ptsz = runtime(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000);
  CHECK(ptsz.per_thread);
  CHECK(queryable_stream(plain, 0) == 0);
  CHECK(queryable_stream(plain, trace::kStreamLegacy) == 0);
  CHECK(queryable_stream(ptsz, trace::kStreamLegacy) == 0);
  CHECK(queryable_stream(ptsz, 0) == trace::kStreamPerThread);
  CHECK(queryable_stream(plain, trace::kStreamPerThread) == trace::kStreamPerThread);
  CHECK(queryable_stream(plain, 0x7000) == 0x7000);
  CHECK(driver(CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz).per_thread);
}

TEST_CASE("cuStreamBeginCapture_v2: driver stream and mode") {
  const CallbackInfo& info = driver(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2);
  cuStreamBeginCapture_v2_params params{};
  params.hStream = static_cast<CUstream>(handle(0x6000));
  params.mode = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
  ApiEvent event;
  decode_params(info, &params, 0, event);
  CHECK(event.stream == 0x6000);
  CHECK(event.has(Field::Mode));
  CHECK(event.mode == trace::CaptureMode::ThreadLocal);
  uint64_t stream = 0;
  CHECK(decode_stream(info, &params, stream));
  CHECK(stream == 0x6000);
}

TEST_CASE("cudaLaunchKernelEx and cuLaunchKernelEx: the stream inside the launch config") {
  cudaLaunchConfig_t config{};
  config.stream = static_cast<cudaStream_t>(handle(0x6100));
  const CallbackInfo& runtime_info = runtime(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060);
  cudaLaunchKernelExC_v11060_params runtime_params{&config, nullptr, nullptr};
  ApiEvent launched;
  decode_params(runtime_info, &runtime_params, 0, launched);
  CHECK(launched.has(Field::Stream));
  CHECK(launched.stream == 0x6100);
  CHECK(is_capture_body(runtime_info, 0));

  CUlaunchConfig driver_config{};
  driver_config.hStream = static_cast<CUstream>(handle(0x6200));
  const CallbackInfo& driver_info = driver(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz);
  cuLaunchKernelEx_ptsz_params driver_params{&driver_config, nullptr, nullptr, nullptr};
  uint64_t stream = 0;
  CHECK(decode_stream(driver_info, &driver_params, stream));
  CHECK(stream == 0x6200);
  driver_config.hStream = nullptr;  // the per-thread entry point: 0 is cudaStreamPerThread
  CHECK(decode_stream(driver_info, &driver_params, stream));
  CHECK(queryable_stream(driver_info, stream) == trace::kStreamPerThread);

  cudaLaunchKernelExC_v11060_params no_config{nullptr, nullptr, nullptr};
  CHECK_FALSE(decode_stream(runtime_info, &no_config, stream));
  ApiEvent unknown;
  decode_params(runtime_info, &no_config, 0, unknown);
  CHECK_FALSE(unknown.has(Field::Stream));
}

TEST_CASE("created handles are read only when the call succeeded") {
  const CallbackInfo& info = runtime(CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000);
  cudaStream_t created = static_cast<cudaStream_t>(handle(0x7100));
  cudaStreamCreateWithFlags_v5000_params params{&created, cudaStreamNonBlocking};
  ApiEvent ok;
  decode_params(info, &params, 0, ok);
  CHECK(ok.has(Field::Stream));
  CHECK(ok.stream == 0x7100);
  CHECK(ok.flags == cudaStreamNonBlocking);
  ApiEvent failed;
  decode_params(info, &params, 2 /* cudaErrorMemoryAllocation */, failed);
  CHECK_FALSE(failed.has(Field::Stream));
  CHECK(failed.has(Field::Flags));

  cudaStreamCreateWithFlags_v5000_params null_out{nullptr, 0};
  ApiEvent no_pointer;
  decode_params(info, &null_out, 0, no_pointer);
  CHECK_FALSE(no_pointer.has(Field::Stream));
}

TEST_CASE("EndCapture: the graph comes out through pGraph; instantiate: graph in, exec out") {
  cudaGraph_t graph = static_cast<cudaGraph_t>(handle(0x8000));
  cudaStreamEndCapture_v10000_params end{static_cast<cudaStream_t>(handle(0x6000)), &graph};
  ApiEvent ended;
  decode_params(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000), &end, 0, ended);
  CHECK(ended.stream == 0x6000);
  CHECK(ended.has(Field::Graph));
  CHECK(ended.graph == 0x8000);

  cudaGraphExec_t exec = static_cast<cudaGraphExec_t>(handle(0x9000));
  cudaGraphInstantiate_v12000_params inst{&exec, graph, 0};
  ApiEvent instantiated;
  decode_params(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000), &inst, 0,
                instantiated);
  CHECK(instantiated.graph == 0x8000);
  CHECK(instantiated.graph_exec == 0x9000);
}

TEST_CASE("cudaStreamWaitEvent: stream, event and flags") {
  cudaStreamWaitEvent_v3020_params params{static_cast<cudaStream_t>(handle(0x6000)),
                                          static_cast<cudaEvent_t>(handle(0xe000)),
                                          cudaEventWaitExternal};
  ApiEvent event;
  decode_params(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020), &params, 0, event);
  CHECK(event.stream == 0x6000);
  CHECK(event.event == 0xe000);
  CHECK(event.flags == cudaEventWaitExternal);
}

TEST_CASE("cudaThreadExchangeStreamCaptureMode: the mode is read through its pointer") {
  const CallbackInfo& info =
      runtime(CUPTI_RUNTIME_TRACE_CBID_cudaThreadExchangeStreamCaptureMode_v10010);
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode_v10010_params params{&mode};
  uint32_t read = 99;
  CHECK(decode_mode_pointer(info, &params, read));
  CHECK(read == cudaStreamCaptureModeRelaxed);
  cudaThreadExchangeStreamCaptureMode_v10010_params null_pointer{nullptr};
  CHECK_FALSE(decode_mode_pointer(info, &null_pointer, read));
  CHECK_FALSE(decode_mode_pointer(info, nullptr, read));
}

TEST_CASE("NULL params and NULL return values decode to nothing") {
  const CallbackInfo& info = runtime(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
  ApiEvent event;
  decode_params(info, nullptr, 0, event);
  CHECK(event.fields == 0);
  CHECK(decode_result(info, nullptr) == 0);
  const int32_t error = 900;
  CHECK(decode_result(info, &error) == 900);
}

TEST_CASE("internal __cuda entry points that return no error code give result 0") {
  const CallbackInfo& reg = runtime(CUPTI_RUNTIME_TRACE_CBID___cudaRegisterFatBinary_v13000);
  CHECK_FALSE(reg.returns_error);
  CHECK_FALSE(reg.has_params);
  const int32_t garbage = 12345;
  CHECK(decode_result(reg, &garbage) == 0);
  CHECK(runtime(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000).returns_error);
}

TEST_CASE("record policy: everything during a capture, outside only roles and capture errors") {
  const CallbackInfo& launch = runtime(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  const CallbackInfo& malloc_ = runtime(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
  const CallbackInfo& begin = runtime(CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000);
  const CallbackInfo& end = runtime(CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000);
  const CallbackInfo& create = driver(CUPTI_DRIVER_TRACE_CBID_cuStreamCreate);
  CHECK_FALSE(should_record(launch, false, 0));
  CHECK(should_record(launch, true, 0));
  CHECK(should_record(begin, false, 0));
  CHECK(should_record(begin, false, 900));  // a failed begin (legacy stream) matters too
  CHECK(should_record(create, false, 0));
  CHECK(should_record(malloc_, false, 900));
  CHECK(should_record(malloc_, false, 908));
  CHECK_FALSE(should_record(malloc_, false, 2));
  CHECK_FALSE(should_record(malloc_, false, 401));  // IllegalState is a capture error only here:
  CHECK(should_record(end, false, 401));            // EndCapture on a stream not capturing
  // Graph lifetime: allocations and frees that take no stream are recorded outside captures
  // when they succeed (or return a sticky error); syncs, graph launches and stream-ordered
  // allocations there are the graph watch's decision (graph_policy.h), not the table's.
  CHECK(should_record(malloc_, false, 0));
  CHECK(should_record(malloc_, false, 700));
  CHECK(should_record(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020), false, 0));
  CHECK_FALSE(should_record(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020), false, 0));
  CHECK_FALSE(
      should_record(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020), false, 0));
  CHECK_FALSE(should_record(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000), false, 0));
  // The syncs the graph watch may record are those that wait, not the queries.
  CHECK(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020).synchronizes);
  CHECK(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020).synchronizes);
  CHECK(api_info(ApiDomain::Driver, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize).synchronizes);
  CHECK_FALSE(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020).synchronizes);
  CHECK_FALSE(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020).synchronizes);
}

}  // namespace
TEST_CASE("getters and the runtime's own entry points are recorded only when they fail") {
  const CallbackInfo& name =
      api_info(trace::ApiDomain::Driver, CUPTI_DRIVER_TRACE_CBID_cuKernelGetName);
  CHECK(name.getter);
  CHECK_FALSE(should_record(name, /*capture_active=*/true, 0));
  CHECK(should_record(name, true, 900));
  const CallbackInfo& push = api_info(trace::ApiDomain::Runtime,
                                      CUPTI_RUNTIME_TRACE_CBID___cudaPushCallConfiguration_v13000);
  CHECK(push.internal);
  CHECK_FALSE(should_record(push, true, 0));
  const CallbackInfo& launch =
      api_info(trace::ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  CHECK_FALSE(launch.getter);
  CHECK_FALSE(launch.internal);
  CHECK(should_record(launch, true, 0));
  const CallbackInfo& alloc =
      api_info(trace::ApiDomain::Driver, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2);
  CHECK(should_record(alloc, true, 0));  // a Relaxed-mode allocation matters when it succeeds
}

}  // namespace capguard::interposer
