// The calling thread's Python frames, for programs run by CPython (PyTorch, CuPy, JAX ...).
// Users of these frameworks need the culprit as a Python file and line, not a frame inside
// libtorch. Nothing here links libpython: the interpreter's functions are looked up with
// dlsym(RTLD_DEFAULT) the first time, and a process that is not CPython gets no frames.
//
// Two ways to read the frames, neither of which ever takes the GIL:
//  - CPython 3.11, 3.12 and 3.13: read the thread's own interpreter frames in place, through
//    their known layout (PyGILState_GetThisThreadState, then the frame chain). This works
//    while the thread has released the GIL, which is the usual case: PyTorch and JAX release
//    it around nearly every operation that reaches CUDA. A thread's frame chain changes only
//    when that thread runs Python, and it is inside a CUDA call, so the chain holds still.
//    Nothing is written, allocated or reference-counted; every code object and string is
//    type-checked before it is read.
//  - Other versions: only while the thread holds the GIL (PyGILState_Check() == 1), through
//    the stable C API (PyEval_GetFrame, PyFrame_GetCode, PyFrame_GetBack ...), with any
//    pending Python exception saved and restored around it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "trace/format.h"
#include "trace/writer.h"

namespace capguard::interposer {

// Fills `ids` with the calling thread's Python frames, innermost first, and returns how many
// (0 outside CPython, on threads without Python frames, or when they cannot be read safely).
// A frame this thread has not named before in this trace (`generation` changes per trace
// file) is first written to `writer` as a 'y' record under a new process-wide id.
//
// With `handled_exception` (a call that ends a capture), a thread handling a Python exception
// (sys.exception(): inside `except`, or a `with` statement's __exit__ while an exception
// propagates, which is how torch.cuda.graph ends a capture its body raised in) gets one pseudo
// frame first: file trace::kPythonExceptionFile, function "RuntimeError: first line of the
// message", line where it passed through the frame handling it. Known layouts only (3.11 to 3.13).
// No format change: a reader that does not know the file name shows it as a frame.
size_t capture_python_frames(uint32_t* ids, size_t capacity, trace::TraceWriter& writer,
                             uint64_t generation, bool handled_exception = false);

// True when the process runs CPython and its frames can be read (attaches on first use).
bool python_frames_available();

// Tests: looks the interpreter up again (after it was loaded with dlopen), and optionally
// walks with the stable API even where the layout is known.
void reattach_python_for_testing(bool force_stable_api);

}  // namespace capguard::interposer
