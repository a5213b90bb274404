"""Twin of graph_argument_frozen for PyTorch: the step counter lives in a device tensor updated
with fill_ before each replay, so the captured kernels read the current step."""
import torch

x = torch.ones(1024, device="cuda")
step_t = torch.zeros((), device="cuda")
out = torch.empty_like(x)


def update():
    torch.mul(x, step_t, out=out)


side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for step in range(1, 4):
        step_t.fill_(step)
        update()
torch.cuda.current_stream().wait_stream(side)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    update()
total = 0.0
for step in range(4, 9):
    step_t.fill_(step)
    g.replay()
    total += float(out.sum())
print(f"total {total:.1f}")
