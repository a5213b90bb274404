"""The twin of torch_workspace_resized (no finding expected): the shared workspace is grown to
its largest size before any graph captures it, so its address never changes under a graph."""
import torch

torch.manual_seed(0)
workspace = torch.zeros(1 << 20, device="cuda")
workspace.resize_(4 << 20)  # before the capture
x = torch.randn(4 << 20, device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    workspace.add_(x)
torch.cuda.current_stream().wait_stream(side)

g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    workspace.add_(x)
for _ in range(3):
    other = torch.ones(1 << 20, device="cuda")
    del other
    g.replay()
torch.cuda.synchronize()
print("done:", float(workspace[0]))
