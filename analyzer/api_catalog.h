// The API catalog: what each CUDA function is, as far as stream capture is concerned. One table
// (api_catalog.cpp) is the single source of truth; every rule asks it instead of matching names.
#pragma once

#include <cstdint>
#include <string_view>

#include "trace/format.h"

namespace capguard {

enum class ApiKind : uint8_t {
  Other,            // nothing capture cares about (getters, module loading, ...)
  BeginCapture,     // cudaStreamBeginCapture, cuStreamBeginCapture_v2, ...ToGraph
  EndCapture,       // cudaStreamEndCapture, cuStreamEndCapture
  ExchangeMode,     // cudaThreadExchangeStreamCaptureMode
  StreamSync,       // synchronize or query one stream
  DeviceSync,       // synchronize the device or the context
  EventRecord,      // cudaEventRecord[WithFlags]
  EventSync,        // cudaEventQuery / cudaEventSynchronize
  StreamWaitEvent,  // cudaStreamWaitEvent
  Enqueue,          // asynchronous work on a stream: launches, async copies/memsets, ...
  SyncCopy,         // synchronous copy/memset: runs on the legacy (or per-thread) stream
  Unsafe,           // allocation, free, pinning: "potentially unsafe" during capture
  Unsupported,      // not capturable at all: cudaStreamAttachMemAsync, cudaStreamAddCallback
  StreamCreate,
  StreamDestroy,
  EventCreate,
  EventDestroy,
  CaptureQuery,  // cudaStreamIsCapturing, cudaStreamGetCaptureInfo
  GraphInstantiate,
  GraphLaunch,  // work on a stream, like Enqueue
  ErrorReport,  // cudaGetLastError / cudaPeekAtLastError: repeat an earlier call's error
};

struct ApiInfo {
  ApiKind kind = ApiKind::Other;
  bool takes_stream = false;  // the call names a stream (Field::Stream is meaningful)
  bool per_thread = false;    // a _ptsz/_ptds entry point: stream 0 is the per-thread stream
  trace::ApiDomain domain = trace::ApiDomain::Runtime;
  std::string_view base;  // the name without _ptsz/_ptds and version suffixes
};

// Classifies a function name as CUPTI reports it ("cudaMemcpyAsync_ptsz", "cuMemcpyHtoD_v2").
// Unknown names give ApiKind::Other.
ApiInfo classify_api(std::string_view name);

// Asynchronous work placed on a stream (becomes a graph node when the stream captures).
inline bool is_stream_work(ApiKind kind) {
  return kind == ApiKind::Enqueue || kind == ApiKind::GraphLaunch;
}

const char* to_string(ApiKind kind);

}  // namespace capguard
