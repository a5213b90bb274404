"""The correct twin of cupy_freed_array_replay.py: the captured input stays referenced and gets
new data copied in (x[...] = batch); an array the graph does not hold is dropped while the graph
lives; the graph goes before its arrays (no finding expected)."""
import cupy as cp

n = 1 << 20
x = cp.full(n, 1.0, dtype=cp.float32)
y = cp.zeros(n, dtype=cp.float32)
s = cp.cuda.Stream(non_blocking=True)
with s:
    cp.multiply(x, 2.0, out=y)  # warm up the kernel before the capture
    s.begin_capture()
    cp.multiply(x, 2.0, out=y)
    g = s.end_capture()
    g.launch(s)
    s.synchronize()
batch = cp.full(n, 7.0, dtype=cp.float32)
x[...] = batch  # new data into the captured input: x stays the graph's
del batch  # not the graph's: its chunk may go to anyone
cp.cuda.Device().synchronize()
for step in range(3):
    g.launch(s)
s.synchronize()
print("launched on x's new data:", float(y[0]), "(14.0)")
del g  # the graph goes first, then its arrays
del x, y
print("done")
