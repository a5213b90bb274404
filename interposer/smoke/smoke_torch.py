# PyTorch under the interposer: a graph capture with work escaping to the default stream.
import torch

x = torch.zeros(4, device="cuda")
g = torch.cuda.CUDAGraph()
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    x.add_(1)
torch.cuda.synchronize()
with torch.cuda.graph(g):
    x.add_(1)
    with torch.cuda.stream(torch.cuda.default_stream()):
        x.add_(1)
for _ in range(5):
    g.replay()
torch.cuda.synchronize()
print("x[0] =", x[0].item())
