// Reads the parameters that matter for capture out of a CUPTI params struct, by the offsets in
// the API table. Pure functions of (table entry, params, return value): no CUDA calls.
#pragma once

#include <cstdint>

#include "interposer/api_table.h"
#include "trace/event.h"

namespace capguard::interposer {

// The call's result, or 0 when CUPTI gives none (internal entry points, NULL pointer).
int32_t decode_result(const CallbackInfo& info, const void* return_value);

// The capture mode a cudaThreadExchangeStreamCaptureMode call sets: *mode at entry. At exit
// the same pointer holds the previous mode. Returns false when the call has no such pointer.
bool decode_mode_pointer(const CallbackInfo& info, const void* params, uint32_t& mode);

// The stream the call takes as input (not one it creates). False when it takes none.
bool decode_stream(const CallbackInfo& info, const void* params, uint64_t& stream);

// The graph node a cudaGraphExec*NodeSetParams call changes; 0 when it names none.
uint64_t decode_node(const CallbackInfo& info, const void* params);

// Fills the event fields read from the params at exit: the handles and flags passed in, and,
// when the call succeeded, the handles it created (stream, event, graph, graph exec).
void decode_params(const CallbackInfo& info, const void* params, int32_t result,
                   trace::ApiEvent& event);

// The stream whose capture status may be queried for this call, or 0 for "do not query":
// the legacy stream (NULL in a plain entry point, or cudaStreamLegacy) is never queried,
// because asking about it can itself fail or disturb a capture of a blocking stream. NULL in
// a per-thread (_ptsz) entry point means cudaStreamPerThread.
uint64_t queryable_stream(const CallbackInfo& info, uint64_t stream);

// Graph lifetime: the exec a call takes (0 if none), the address a free takes (0 if
// none), and the cudaGraphExecUpdateResultInfo a call fills in (null if none).
uint64_t decode_graph_exec(const CallbackInfo& info, const void* params);
uint64_t decode_pointer(const CallbackInfo& info, const void* params);
const void* decode_update_info(const CallbackInfo& info, const void* params);

}  // namespace capguard::interposer
