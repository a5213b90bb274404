// The API catalog, analyzer side: classifies a function name from a trace by the one list of
// CUDA functions (trace/api_catalog.def), which also makes the interposer's table. Every rule
// asks it instead of matching names.
#pragma once

#include <cstdint>
#include <string_view>

#include "trace/api_kind.h"
#include "trace/format.h"

namespace capguard {

struct ApiInfo {
  ApiKind kind = ApiKind::Other;
  MemoryOp memory = MemoryOp::None;
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

}  // namespace capguard
