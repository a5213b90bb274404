// The innermost run of a stack that is CUDA's and capguard's own code (the driver, the runtime,
// CUPTI, the interposer): JSON and SARIF list it apart, so that a stack they write never leads
// with it and its first frame is where the program's side begins.
#pragma once

#include <cstddef>

#include "model/report.h"

namespace capguard {

// How many of location.frames, from the innermost, are that run: never past the user frame,
// and 0 when no frame lies outside it (the stack is then kept as it is).
size_t inner_frame_count(const Location& location);

}  // namespace capguard
