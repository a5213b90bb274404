"""The twin of cupy_fft_plan_in_capture: a first FFT of the size runs before the capture, so the
plan is in CuPy's cache and the capture records the transform alone."""
import cupy as cp

x = (cp.arange(4096, dtype=cp.float32) % 7).astype(cp.complex64)
y = cp.empty_like(x)
y[...] = cp.fft.fft(x)  # the plan is made here, outside any capture
s = cp.cuda.Stream(non_blocking=True)
with s:
    s.begin_capture(mode=cp.cuda.runtime.streamCaptureModeRelaxed)
    y[...] = cp.fft.fft(x)
    g = s.end_capture()
    g.launch(s)
s.synchronize()
print("y[1] =", complex(y[1]))
