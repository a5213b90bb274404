"""A Triton kernel launched on a side stream inside torch.cuda.graph, the side stream never
forked into the capture: CUDA accepts the launch (Triton's launcher passes the stream inside a
cuLaunchKernelEx launch config), runs it once now, and leaves it out of the graph; replays then
skip it. Twin: triton_kernel_in_capture_ok."""
import torch
import triton
import triton.language as tl


@triton.jit
def add_one(data, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(data + offsets, tl.load(data + offsets, mask=mask) + 1, mask=mask)


x = torch.zeros(1024, device="cuda")
side = torch.cuda.Stream()
add_one[(1,)](x, x.numel(), BLOCK=1024)  # compiles and loads the kernel before any capture
torch.cuda.synchronize()

g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y = x * 2
    with torch.cuda.stream(side):
        add_one[(1,)](x, x.numel(), BLOCK=1024)  # expect: escaped-side-stream-work
side.synchronize()
for _ in range(5):
    g.replay()
torch.cuda.synchronize()
print("x[0] after 5 replays:", x[0].item(), "(6 if the kernel had been captured)")
