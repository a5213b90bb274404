"""A Relaxed capture on a CuPy stream that is dropped before end_capture (an error test that
leaves its capture to the stream's destructor: CuPy's Stream.__del__ destroys the stream, which
ends the capture, no graph made). The thread's later work on another stream, and the allocation
it makes, belong to no capture: nothing is reported (escapes against the abandoned capture, or
capture-never-ended at exit, would be false)."""
import cupy as cp

x = cp.zeros(16, dtype=cp.float32)
x += 1  # compiled and run before any capture
s = cp.cuda.Stream(non_blocking=True)
with s:
    s.begin_capture(mode=cp.cuda.runtime.streamCaptureModeRelaxed)
    x += 1
del s  # the capture's stream is destroyed while it captures
later = cp.cuda.Stream(non_blocking=True)
with later:
    y = cp.ones(1 << 20, dtype=cp.float32)  # a new block: cudaMalloc, outside any capture
    x += y[:16]
later.synchronize()
print("x[0] =", float(x[0]), "(expect 2: the captured add never ran)")
