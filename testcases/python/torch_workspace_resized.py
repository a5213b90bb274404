"""A workspace tensor shared by captured graphs is grown with resize_() after the capture
(flashinfer#4553, #4827): resize_ moves the storage to a new block and frees the old one, which
the graphs still point at; the next tensor gets it."""
import torch

torch.manual_seed(0)
workspace = torch.zeros(1 << 20, device="cuda")
x = torch.randn(1 << 20, device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    workspace.add_(x)
torch.cuda.current_stream().wait_stream(side)

g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    workspace.add_(x)

g.replay()
torch.cuda.synchronize()
workspace.resize_(4 << 20)  # a new, larger block: the graph keeps the old address
other = torch.ones(1 << 20, device="cuda")  # the old block, handed out again
g.replay()  # expect: replay-after-free
torch.cuda.synchronize()
print("other now holds the graph's sums:", float(other[0]))
