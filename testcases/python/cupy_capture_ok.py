"""CuPy's Stream.begin_capture / end_capture around elementwise work, launched 5 times."""
import cupy as cp

x = cp.zeros(16, dtype=cp.float32)
s = cp.cuda.Stream(non_blocking=True)
with s:
    s.begin_capture()
    x += 1
    g = s.end_capture()
for _ in range(5):
    g.launch(s)
s.synchronize()
print("x[0] =", float(x[0]), "(expect 5)")
