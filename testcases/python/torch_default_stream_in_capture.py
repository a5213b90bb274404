"""Work sent to the default (legacy) stream inside torch.cuda.graph: PyTorch's capture stream
is non-blocking, so CUDA accepts it, runs it once now, and leaves it out of the graph."""
import torch
from common import report

x = torch.zeros(16, device="cuda")
g = torch.cuda.CUDAGraph()


def capture():
    with torch.cuda.graph(g):
        y = x * 2
        with torch.cuda.stream(torch.cuda.default_stream()):
            x.add_(1)  # expect: escaped-legacy-work
        del y


report("capture", capture)
for _ in range(5):
    g.replay()
torch.cuda.synchronize()
print("x[0] after 5 replays:", x[0].item(), "(6 if the add had been captured)")
