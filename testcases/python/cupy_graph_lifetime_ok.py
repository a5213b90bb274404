"""CuPy graph replayed 30 times while other arrays are allocated and freed; the graph is
dropped before its arrays (no finding expected)."""
import cupy as cp

x = cp.zeros(1 << 16, dtype=cp.float32)
y = cp.ones(1 << 16, dtype=cp.float32)
s = cp.cuda.Stream(non_blocking=True)
with s:
    x += y  # warm up the kernel before the capture
    s.begin_capture()
    x += y
    x *= 0.5
    g = s.end_capture()
for _ in range(30):
    tmp = cp.arange(1 << 18, dtype=cp.float32)
    del tmp
    g.launch(s)
s.synchronize()
print("x[0] =", float(x[0]))
del g
del x, y
cp.get_default_memory_pool().free_all_blocks()
print("done")
