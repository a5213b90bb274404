// The CUDA result codes that stream capture produces, shared by the interposer (which failures
// to record) and the analyzer (what they mean). cudaError_t and CUresult give them the same
// numbers (CUDA 13.0's driver_types.h and cuda.h); their names are in model/cuda_errors.cpp.
#pragma once

#include <cstdint>

namespace capguard::trace {

// cudaErrorInvalidResourceHandle / CUDA_ERROR_INVALID_HANDLE: e.g. an event recorded on a
// stream of another device than the event's (measured on two H200s).
inline constexpr int kErrInvalidResourceHandle = 400;
inline constexpr int kErrIllegalState = 401;  // e.g. EndCapture on a stream that is not capturing
// Errors that stay with the context once a kernel faulted: every later call returns them.
inline constexpr bool is_sticky_error(int result) {
  return result == 700 || result == 701 || (result >= 714 && result <= 719) || result == 999;
}
inline constexpr int kErrCaptureUnsupported = 900;
inline constexpr int kErrCaptureInvalidated = 901;
inline constexpr int kErrCaptureMerge = 902;
inline constexpr int kErrCaptureUnmatched = 903;
inline constexpr int kErrCaptureUnjoined = 904;
inline constexpr int kErrCaptureIsolation = 905;
inline constexpr int kErrCaptureImplicit = 906;
inline constexpr int kErrCapturedEvent = 907;
inline constexpr int kErrCaptureWrongThread = 908;

// 900..908: the call failed because of, or killed, a stream capture.
constexpr bool is_capture_error(int32_t result) {
  return result >= kErrCaptureUnsupported && result <= kErrCaptureWrongThread;
}

}  // namespace capguard::trace
