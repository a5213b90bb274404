"""Twin of triton_kernel_side_stream_in_capture: the same Triton kernel in torch.cuda.graph, once
on the capture stream and once on a side stream forked in and joined back (wait_stream both
ways), so both launches are nodes of the graph. capguard must report nothing."""
import torch
import triton
import triton.language as tl


@triton.jit
def add_one(data, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(data + offsets, tl.load(data + offsets, mask=mask) + 1, mask=mask)


x = torch.zeros(1024, device="cuda")
z = torch.zeros(1024, device="cuda")
side = torch.cuda.Stream()
add_one[(1,)](x, x.numel(), BLOCK=1024)  # compiles and loads the kernel before any capture
torch.cuda.synchronize()

g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    add_one[(1,)](x, x.numel(), BLOCK=1024)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        add_one[(1,)](z, z.numel(), BLOCK=1024)
    torch.cuda.current_stream().wait_stream(side)
for _ in range(5):
    g.replay()
torch.cuda.synchronize()
print("x[0], z[0] after 5 replays:", x[0].item(), z[0].item(), "(6 and 5)")
