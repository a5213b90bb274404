"""`.item()` inside torch.cuda.graph: a device-to-host copy plus a synchronize of the capturing
stream. CUDA rejects the synchronize (900) and PyTorch reports it later, elsewhere."""
import torch
from common import report

x = torch.ones(16, device="cuda")
g = torch.cuda.CUDAGraph()


def capture():
    with torch.cuda.graph(g):
        y = x * 2
        if y.sum().item() > 0:  # expect: sync-during-capture
            y += 1


report("capture", capture)
