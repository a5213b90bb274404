// Names of CUDA result codes, for reports: cudaError_t names for runtime calls, CUresult names
// for driver calls. Generated from CUDA 13.0's driver_types.h and cuda.h.
#pragma once

#include <string>

#include "trace/format.h"

namespace capguard {

// "cudaErrorStreamCaptureUnsupported" / "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"; an unknown
// code gives "cudaError(1234)" / "CUresult(1234)".
std::string result_name(int result, trace::ApiDomain domain);

}  // namespace capguard
