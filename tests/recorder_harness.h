// The recorder's test harness: fabricated CUPTI callbacks (ENTER, what happens inside, EXIT)
// into a Recorder with a fake CUDA driver behind its seam, and the trace read back. Shared by
// the recorder's tests and the launch hooks' (whose deliveries must record the same).
#pragma once

#include <cupti.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "interposer/recorder.h"
#include "tests/trace_recording_sink.h"
#include "trace/reader.h"

namespace capguard::interposer::recorder_harness {

using trace::ApiDomain;
using trace::ApiEvent;
using trace::CaptureStatus;
using trace::Field;
using trace::testing::RecordingSink;
using trace::testing::TempDir;

inline constexpr uint64_t kStream = 0x5000;
inline constexpr uint64_t kForked = 0x5100;

// The fake driver: capture status per stream, as the test sets it.
struct FakeCuda {
  std::map<uint64_t, int> status;
  std::map<uint64_t, unsigned long long> id;
  std::vector<uint64_t> queried;
  size_t nodes = 3;
  std::vector<uint64_t> stack = {0x1000, 0x2000};
  Recorder* reenter = nullptr;  // plays CUPTI reporting the interposer's own driver call
};
inline FakeCuda g_fake;

inline void driver_callback(Recorder& r, uint32_t cbid, const char* name);

inline int fake_capture_info(void* stream, int* status, unsigned long long* id, void*, void*, void*,
                             size_t*) {
  const auto s = reinterpret_cast<uint64_t>(stream);
  g_fake.queried.push_back(s);
  if (g_fake.reenter != nullptr) {
    driver_callback(*g_fake.reenter, CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v3,
                    "cuStreamGetCaptureInfo_v3");
  }
  *status = g_fake.status[s];
  *id = g_fake.id[s];
  return 0;
}
inline int fake_stream_flags(void*, unsigned int* flags) {
  *flags = 1;  // cudaStreamNonBlocking
  return 0;
}
inline int fake_graph_nodes(void*, void* nodes, size_t* count) {
  if (nodes == nullptr) *count = g_fake.nodes;
  return 0;
}
inline size_t fake_stack(uint64_t* out, size_t capacity, uint64_t, uint64_t) {
  const size_t n = std::min(capacity, g_fake.stack.size());
  std::copy_n(g_fake.stack.begin(), n, out);
  return n;
}

inline std::unique_ptr<Recorder> make_recorder(const TempDir& dir) {
  g_fake = FakeCuda{};
  RecorderConfig config;
  config.trace_dir = dir.path().c_str();
  config.driver.stream_get_capture_info = &fake_capture_info;
  config.driver.stream_get_flags = &fake_stream_flags;
  config.driver.graph_get_nodes = &fake_graph_nodes;
  config.capture_stack = &fake_stack;
  auto recorder = std::make_unique<Recorder>(config);
  REQUIRE(recorder->start());
  return recorder;
}

// One API call as CUPTI reports it: ENTER, whatever happens inside, EXIT.
inline void call(Recorder& r, ApiDomain domain, uint32_t cbid, const char* name, const void* params,
                 int32_t result, const std::function<void()>& inside = {},
                 bool null_return = false) {
  uint64_t correlation = 0;
  CUpti_CallbackData data{};
  data.functionName = name;
  data.functionParams = params;
  data.correlationData = &correlation;
  const auto cupti_domain =
      domain == ApiDomain::Runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
  data.callbackSite = CUPTI_API_ENTER;
  Recorder::switchboard(&r, cupti_domain, cbid, &data);
  if (inside) inside();
  data.callbackSite = CUPTI_API_EXIT;
  data.functionReturnValue = null_return ? nullptr : &result;
  Recorder::switchboard(&r, cupti_domain, cbid, &data);
}

inline void driver_callback(Recorder& r, uint32_t cbid, const char* name) {
  call(r, ApiDomain::Driver, cbid, name, nullptr, 0);
}

template <typename T>
inline T as(uint64_t value) {
  return reinterpret_cast<T>(value);
}

inline void begin_capture(Recorder& r, uint64_t stream, unsigned long long id) {
  cudaStreamBeginCapture_v10000_params p{as<cudaStream_t>(stream), cudaStreamCaptureModeGlobal};
  call(r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
       "cudaStreamBeginCapture", &p, 0, [&] {
         g_fake.status[stream] = 1;
         g_fake.id[stream] = id;
       });
}

// A stream that joined a capture by waiting on one of its events: CUDA reports it capturing.
inline void fork_into_capture(uint64_t stream, unsigned long long id) {
  g_fake.status[stream] = 1;
  g_fake.id[stream] = id;
}

inline void end_capture(Recorder& r, uint64_t stream, uint64_t graph_handle) {
  cudaGraph_t graph = as<cudaGraph_t>(graph_handle);
  cudaStreamEndCapture_v10000_params p{as<cudaStream_t>(stream), &graph};
  call(r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000,
       "cudaStreamEndCapture", &p, 0, [&] { g_fake.status[stream] = 0; });
}

inline void launch(Recorder& r, uint64_t stream, bool ptsz = false, int32_t result = 0) {
  cudaLaunchKernel_v7000_params p{};
  p.stream = as<cudaStream_t>(stream);
  call(r, ApiDomain::Runtime,
       ptsz ? CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000
            : CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
       ptsz ? "cudaLaunchKernel_ptsz" : "cudaLaunchKernel", &p, result);
}

inline void malloc_call(Recorder& r, int32_t result) {
  cudaMalloc_v3020_params p{};
  call(r, ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, "cudaMalloc", &p, result);
}

inline RecordingSink read_back(const std::string& path) {
  RecordingSink sink;
  const auto error = trace::read_trace(path, sink);
  if (error) FAIL(error->to_string());
  return sink;
}
inline RecordingSink read_back(const Recorder& r) { return read_back(r.writer().path()); }

inline std::vector<std::string> api_names(const RecordingSink& sink) {
  std::vector<std::string> names;
  for (const auto& e : sink.events) names.emplace_back(e.api);
  return names;
}

}  // namespace capguard::interposer::recorder_harness
