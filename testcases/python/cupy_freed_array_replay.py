"""A CuPy graph reads an array the program drops after the capture: CuPy's memory pool keeps the
chunk and hands it to the next array of that size without any CUDA call, so every later launch
reads the new array's data (the CuPy form of vllm#43909). capguard sees the free and the reuse
through the hook it gives CuPy's pool (cupy.cuda.MemoryHook) and reports the launch, the `del`
and the new owner."""
import cupy as cp

n = 1 << 20
x = cp.full(n, 1.0, dtype=cp.float32)  # on the current stream's arena, as `batch` below
y = cp.zeros(n, dtype=cp.float32)
s = cp.cuda.Stream(non_blocking=True)
with s:
    cp.multiply(x, 2.0, out=y)  # warm up the kernel before the capture
    s.begin_capture()
    cp.multiply(x, 2.0, out=y)
    g = s.end_capture()
    g.launch(s)
    s.synchronize()
del x  # the graph still reads this chunk
batch = cp.full(n, 7.0, dtype=cp.float32)  # the same chunk, handed out again
cp.cuda.Device().synchronize()
for step in range(3):
    g.launch(s)  # expect: replay-after-free
s.synchronize()
print("launched on the new array's data:", float(y[0]), "(14.0: it read `batch`)")
