"""The twin of cupy_capture_stream_destroyed: the Relaxed capture is ended before its stream is
dropped, the graph launched once; the later work on another stream is plain eager work."""
import cupy as cp

x = cp.zeros(16, dtype=cp.float32)
x += 1
s = cp.cuda.Stream(non_blocking=True)
with s:
    s.begin_capture(mode=cp.cuda.runtime.streamCaptureModeRelaxed)
    x += 1
    g = s.end_capture()
g.launch(s)
s.synchronize()
del g, s
later = cp.cuda.Stream(non_blocking=True)
with later:
    y = cp.ones(1 << 20, dtype=cp.float32)
    x += y[:16]
later.synchronize()
print("x[0] =", float(x[0]), "(expect 3)")
