#include "analyzer/api_catalog.h"

#include <algorithm>
#include <array>

namespace capguard {
namespace {

struct Entry {
  std::string_view name;  // base name: no _ptsz/_ptds, no _vN
  ApiKind kind;
  bool takes_stream;
};

using K = ApiKind;
constexpr bool S = true;   // takes a stream
constexpr bool N = false;  // does not

// Sorted by name at compile time (see kSorted); order here is by topic.
constexpr Entry kEntries[] = {
    // Capture control.
    {"cudaStreamBeginCapture", K::BeginCapture, S},
    {"cudaStreamBeginCaptureToGraph", K::BeginCapture, S},
    {"cuStreamBeginCapture", K::BeginCapture, S},
    {"cuStreamBeginCaptureToGraph", K::BeginCapture, S},
    {"cudaStreamEndCapture", K::EndCapture, S},
    {"cuStreamEndCapture", K::EndCapture, S},
    {"cudaThreadExchangeStreamCaptureMode", K::ExchangeMode, N},
    // Report an earlier call's error (PyTorch and CuPy ask right after a failed call).
    {"cudaGetLastError", K::ErrorReport, N},
    {"cudaPeekAtLastError", K::ErrorReport, N},
    {"cuThreadExchangeStreamCaptureMode", K::ExchangeMode, N},
    {"cudaStreamIsCapturing", K::CaptureQuery, S},
    {"cudaStreamGetCaptureInfo", K::CaptureQuery, S},
    {"cuStreamIsCapturing", K::CaptureQuery, S},
    {"cuStreamGetCaptureInfo", K::CaptureQuery, S},
    // Synchronization.
    {"cudaStreamSynchronize", K::StreamSync, S},
    {"cudaStreamQuery", K::StreamSync, S},
    {"cuStreamSynchronize", K::StreamSync, S},
    {"cuStreamQuery", K::StreamSync, S},
    {"cudaDeviceSynchronize", K::DeviceSync, N},
    {"cudaThreadSynchronize", K::DeviceSync, N},
    {"cuCtxSynchronize", K::DeviceSync, N},
    // Events.
    {"cudaEventRecord", K::EventRecord, S},
    {"cudaEventRecordWithFlags", K::EventRecord, S},
    {"cuEventRecord", K::EventRecord, S},
    {"cuEventRecordWithFlags", K::EventRecord, S},
    {"cudaEventQuery", K::EventSync, N},
    {"cudaEventSynchronize", K::EventSync, N},
    {"cuEventQuery", K::EventSync, N},
    {"cuEventSynchronize", K::EventSync, N},
    {"cudaStreamWaitEvent", K::StreamWaitEvent, S},
    {"cuStreamWaitEvent", K::StreamWaitEvent, S},
    {"cudaEventCreate", K::EventCreate, N},
    {"cudaEventCreateWithFlags", K::EventCreate, N},
    {"cuEventCreate", K::EventCreate, N},
    {"cudaEventDestroy", K::EventDestroy, N},
    {"cuEventDestroy", K::EventDestroy, N},
    // Streams.
    {"cudaStreamCreate", K::StreamCreate, S},
    {"cudaStreamCreateWithFlags", K::StreamCreate, S},
    {"cudaStreamCreateWithPriority", K::StreamCreate, S},
    {"cuStreamCreate", K::StreamCreate, S},
    {"cuStreamCreateWithPriority", K::StreamCreate, S},
    {"cudaStreamDestroy", K::StreamDestroy, S},
    {"cuStreamDestroy", K::StreamDestroy, S},
    // Graphs.
    {"cudaGraphInstantiate", K::GraphInstantiate, N},
    {"cudaGraphInstantiateWithFlags", K::GraphInstantiate, N},
    {"cudaGraphInstantiateWithParams", K::GraphInstantiate, N},
    {"cuGraphInstantiate", K::GraphInstantiate, N},
    {"cuGraphInstantiateWithFlags", K::GraphInstantiate, N},
    {"cuGraphInstantiateWithParams", K::GraphInstantiate, N},
    {"cudaGraphLaunch", K::GraphLaunch, S},
    {"cuGraphLaunch", K::GraphLaunch, S},
    // Runtime: asynchronous work on a stream.
    {"cudaLaunch", K::Enqueue, S},
    {"cudaLaunchKernel", K::Enqueue, S},
    {"__cudaLaunchKernel", K::Enqueue, S},
    {"cudaLaunchKernelExC", K::Enqueue, S},
    {"cudaLaunchCooperativeKernel", K::Enqueue, S},
    {"cudaLaunchHostFunc", K::Enqueue, S},
    {"cudaMemcpyAsync", K::Enqueue, S},
    {"cudaMemcpy2DAsync", K::Enqueue, S},
    {"cudaMemcpy3DAsync", K::Enqueue, S},
    {"cudaMemcpy3DPeerAsync", K::Enqueue, S},
    {"cudaMemcpyPeerAsync", K::Enqueue, S},
    {"cudaMemcpyToSymbolAsync", K::Enqueue, S},
    {"cudaMemcpyFromSymbolAsync", K::Enqueue, S},
    {"cudaMemcpyToArrayAsync", K::Enqueue, S},
    {"cudaMemcpyFromArrayAsync", K::Enqueue, S},
    {"cudaMemcpy2DToArrayAsync", K::Enqueue, S},
    {"cudaMemcpy2DFromArrayAsync", K::Enqueue, S},
    {"cudaMemcpyBatchAsync", K::Enqueue, S},
    {"cudaMemcpy3DBatchAsync", K::Enqueue, S},
    {"cudaMemsetAsync", K::Enqueue, S},
    {"cudaMemset2DAsync", K::Enqueue, S},
    {"cudaMemset3DAsync", K::Enqueue, S},
    {"cudaMallocAsync", K::Enqueue, S},
    {"cudaMallocFromPoolAsync", K::Enqueue, S},
    {"cudaFreeAsync", K::Enqueue, S},
    {"cudaMemPrefetchAsync", K::Enqueue, S},
    {"cudaSignalExternalSemaphoresAsync", K::Enqueue, S},
    {"cudaWaitExternalSemaphoresAsync", K::Enqueue, S},
    // Driver: asynchronous work on a stream.
    {"cuLaunchKernel", K::Enqueue, S},
    {"cuLaunchKernelEx", K::Enqueue, S},
    {"cuLaunchCooperativeKernel", K::Enqueue, S},
    {"cuLaunchHostFunc", K::Enqueue, S},
    {"cuLaunchGridAsync", K::Enqueue, S},
    {"cuMemcpyAsync", K::Enqueue, S},
    {"cuMemcpyHtoDAsync", K::Enqueue, S},
    {"cuMemcpyDtoHAsync", K::Enqueue, S},
    {"cuMemcpyDtoDAsync", K::Enqueue, S},
    {"cuMemcpyHtoAAsync", K::Enqueue, S},
    {"cuMemcpyAtoHAsync", K::Enqueue, S},
    {"cuMemcpy2DAsync", K::Enqueue, S},
    {"cuMemcpy3DAsync", K::Enqueue, S},
    {"cuMemcpy3DPeerAsync", K::Enqueue, S},
    {"cuMemcpyPeerAsync", K::Enqueue, S},
    {"cuMemcpyBatchAsync", K::Enqueue, S},
    {"cuMemcpy3DBatchAsync", K::Enqueue, S},
    {"cuMemsetD8Async", K::Enqueue, S},
    {"cuMemsetD16Async", K::Enqueue, S},
    {"cuMemsetD32Async", K::Enqueue, S},
    {"cuMemsetD2D8Async", K::Enqueue, S},
    {"cuMemsetD2D16Async", K::Enqueue, S},
    {"cuMemsetD2D32Async", K::Enqueue, S},
    {"cuMemAllocAsync", K::Enqueue, S},
    {"cuMemAllocFromPoolAsync", K::Enqueue, S},
    {"cuMemFreeAsync", K::Enqueue, S},
    {"cuMemPrefetchAsync", K::Enqueue, S},
    {"cuStreamBatchMemOp", K::Enqueue, S},
    {"cuStreamWaitValue32", K::Enqueue, S},
    {"cuStreamWaitValue64", K::Enqueue, S},
    {"cuStreamWriteValue32", K::Enqueue, S},
    {"cuStreamWriteValue64", K::Enqueue, S},
    {"cuSignalExternalSemaphoresAsync", K::Enqueue, S},
    {"cuWaitExternalSemaphoresAsync", K::Enqueue, S},
    // Synchronous copies and memsets: the legacy stream (per-thread stream for _ptds).
    {"cudaMemcpy", K::SyncCopy, N},
    {"cudaMemcpy2D", K::SyncCopy, N},
    {"cudaMemcpy3D", K::SyncCopy, N},
    {"cudaMemcpy3DPeer", K::SyncCopy, N},
    {"cudaMemcpyPeer", K::SyncCopy, N},
    {"cudaMemcpyToSymbol", K::SyncCopy, N},
    {"cudaMemcpyFromSymbol", K::SyncCopy, N},
    {"cudaMemcpyToArray", K::SyncCopy, N},
    {"cudaMemcpyFromArray", K::SyncCopy, N},
    {"cudaMemcpyArrayToArray", K::SyncCopy, N},
    {"cudaMemcpy2DToArray", K::SyncCopy, N},
    {"cudaMemcpy2DFromArray", K::SyncCopy, N},
    {"cudaMemcpy2DArrayToArray", K::SyncCopy, N},
    {"cudaMemset", K::SyncCopy, N},
    {"cudaMemset2D", K::SyncCopy, N},
    {"cudaMemset3D", K::SyncCopy, N},
    {"cuMemcpy", K::SyncCopy, N},
    {"cuMemcpyHtoD", K::SyncCopy, N},
    {"cuMemcpyDtoH", K::SyncCopy, N},
    {"cuMemcpyDtoD", K::SyncCopy, N},
    {"cuMemcpyHtoA", K::SyncCopy, N},
    {"cuMemcpyAtoH", K::SyncCopy, N},
    {"cuMemcpyAtoD", K::SyncCopy, N},
    {"cuMemcpyDtoA", K::SyncCopy, N},
    {"cuMemcpyAtoA", K::SyncCopy, N},
    {"cuMemcpy2D", K::SyncCopy, N},
    {"cuMemcpy2DUnaligned", K::SyncCopy, N},
    {"cuMemcpy3D", K::SyncCopy, N},
    {"cuMemcpy3DPeer", K::SyncCopy, N},
    {"cuMemcpyPeer", K::SyncCopy, N},
    {"cuMemsetD8", K::SyncCopy, N},
    {"cuMemsetD16", K::SyncCopy, N},
    {"cuMemsetD32", K::SyncCopy, N},
    {"cuMemsetD2D8", K::SyncCopy, N},
    {"cuMemsetD2D16", K::SyncCopy, N},
    {"cuMemsetD2D32", K::SyncCopy, N},
    // Potentially unsafe during capture: allocation, free, pinning.
    {"cudaMalloc", K::Unsafe, N},
    {"cudaMallocPitch", K::Unsafe, N},
    {"cudaMalloc3D", K::Unsafe, N},
    {"cudaMallocArray", K::Unsafe, N},
    {"cudaMalloc3DArray", K::Unsafe, N},
    {"cudaMallocMipmappedArray", K::Unsafe, N},
    {"cudaMallocManaged", K::Unsafe, N},
    {"cudaMallocHost", K::Unsafe, N},
    {"cudaHostAlloc", K::Unsafe, N},
    {"cudaHostRegister", K::Unsafe, N},
    {"cudaHostUnregister", K::Unsafe, N},
    {"cudaFree", K::Unsafe, N},
    {"cudaFreeHost", K::Unsafe, N},
    {"cudaFreeArray", K::Unsafe, N},
    {"cudaFreeMipmappedArray", K::Unsafe, N},
    {"cuMemAlloc", K::Unsafe, N},
    {"cuMemAllocPitch", K::Unsafe, N},
    {"cuMemAllocManaged", K::Unsafe, N},
    {"cuMemAllocHost", K::Unsafe, N},
    {"cuMemHostAlloc", K::Unsafe, N},
    {"cuMemHostRegister", K::Unsafe, N},
    {"cuMemHostUnregister", K::Unsafe, N},
    {"cuMemFree", K::Unsafe, N},
    {"cuMemFreeHost", K::Unsafe, N},
    {"cuArrayCreate", K::Unsafe, N},
    {"cuArray3DCreate", K::Unsafe, N},
    {"cuArrayDestroy", K::Unsafe, N},
    {"cuMipmappedArrayCreate", K::Unsafe, N},
    // Not capturable at all.
    {"cudaStreamAttachMemAsync", K::Unsupported, S},
    {"cudaStreamAddCallback", K::Unsupported, S},
    {"cuStreamAttachMemAsync", K::Unsupported, S},
    {"cuStreamAddCallback", K::Unsupported, S},
};

constexpr auto kSorted = [] {
  std::array<Entry, std::size(kEntries)> sorted{};
  std::copy(std::begin(kEntries), std::end(kEntries), sorted.begin());
  std::sort(sorted.begin(), sorted.end(),
            [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return sorted;
}();

constexpr bool has_duplicates() {
  for (size_t i = 1; i < kSorted.size(); ++i)
    if (kSorted[i - 1].name == kSorted[i].name) return true;
  return false;
}
static_assert(!has_duplicates(), "api catalog: a name is listed twice");

const Entry* find_entry(std::string_view name) {
  auto it = std::lower_bound(kSorted.begin(), kSorted.end(), name,
                             [](const Entry& e, std::string_view n) { return e.name < n; });
  return it != kSorted.end() && it->name == name ? &*it : nullptr;
}

bool strip_suffix(std::string_view& name, std::string_view suffix) {
  if (!name.ends_with(suffix)) return false;
  name.remove_suffix(suffix.size());
  return true;
}

// Removes a trailing "_v<digits>" (cuMemcpyHtoD_v2, cudaStreamGetCaptureInfo_v3).
bool strip_version(std::string_view& name) {
  size_t underscore = name.rfind("_v");
  if (underscore == std::string_view::npos || underscore + 2 == name.size()) return false;
  for (size_t i = underscore + 2; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return false;
  name = name.substr(0, underscore);
  return true;
}

}  // namespace

ApiInfo classify_api(std::string_view name) {
  ApiInfo info;
  std::string_view base = name;
  info.per_thread = strip_suffix(base, "_ptsz") || strip_suffix(base, "_ptds");
  info.domain = name.starts_with("cu") && !name.starts_with("cuda") ? trace::ApiDomain::Driver
                                                                    : trace::ApiDomain::Runtime;
  const Entry* entry = find_entry(base);
  if (!entry && strip_version(base)) entry = find_entry(base);
  info.base = base;
  if (entry) {
    info.kind = entry->kind;
    info.takes_stream = entry->takes_stream;
  }
  return info;
}

const char* to_string(ApiKind kind) {
  switch (kind) {
    case ApiKind::Other:
      return "other";
    case ApiKind::ErrorReport:
      return "error-report";
    case ApiKind::BeginCapture:
      return "begin-capture";
    case ApiKind::EndCapture:
      return "end-capture";
    case ApiKind::ExchangeMode:
      return "exchange-mode";
    case ApiKind::StreamSync:
      return "stream-sync";
    case ApiKind::DeviceSync:
      return "device-sync";
    case ApiKind::EventRecord:
      return "event-record";
    case ApiKind::EventSync:
      return "event-sync";
    case ApiKind::StreamWaitEvent:
      return "stream-wait-event";
    case ApiKind::Enqueue:
      return "enqueue";
    case ApiKind::SyncCopy:
      return "sync-copy";
    case ApiKind::Unsafe:
      return "unsafe";
    case ApiKind::Unsupported:
      return "unsupported";
    case ApiKind::StreamCreate:
      return "stream-create";
    case ApiKind::StreamDestroy:
      return "stream-destroy";
    case ApiKind::EventCreate:
      return "event-create";
    case ApiKind::EventDestroy:
      return "event-destroy";
    case ApiKind::CaptureQuery:
      return "capture-query";
    case ApiKind::GraphInstantiate:
      return "graph-instantiate";
    case ApiKind::GraphLaunch:
      return "graph-launch";
  }
  return "other";
}

}  // namespace capguard
