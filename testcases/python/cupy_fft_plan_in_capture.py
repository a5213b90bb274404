"""A cuFFT plan made inside a Relaxed capture: CuPy makes (and caches) the plan of a size on that
size's first cupy.fft.fft, here while the stream captures; cuFFT copies its tables with
synchronous copies then, which replays will not repeat. capguard names the library's first use
and says the replay is not affected while the plan lives. The twin makes the plan before the
capture (a first FFT of the same size, outside it)."""
import cupy as cp

x = (cp.arange(4096, dtype=cp.float32) % 7).astype(cp.complex64)
y = cp.empty_like(x)
s = cp.cuda.Stream(non_blocking=True)
with s:
    s.begin_capture(mode=cp.cuda.runtime.streamCaptureModeRelaxed)
    y[...] = cp.fft.fft(x)  # expect: escaped-sync-copy*2, relaxed-mode-unsafe-call
    g = s.end_capture()
    g.launch(s)
s.synchronize()
print("y[1] =", complex(y[1]))
