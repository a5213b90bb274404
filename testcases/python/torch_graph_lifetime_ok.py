"""Graph lifetime done right in PyTorch (no finding expected): a captured step replayed 20 times
while other tensors come and go, torch.cuda.empty_cache() while the graph lives (it returns only
blocks the graph does not hold), then the graph is dropped before its tensors. Also run with
PYTORCH_NO_CUDA_MEMORY_CACHING=1, where every tensor free is a cudaFree."""
import gc

import torch

torch.manual_seed(0)
static_x = torch.randn(256, 256, device="cuda")
weight = torch.randn(256, 256, device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(2):
        static_y = torch.relu(static_x @ weight)
torch.cuda.current_stream().wait_stream(side)

g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    static_y = torch.relu(static_x @ weight)

for step in range(20):
    scratch = torch.randn(1024, 1024, device="cuda")  # allocated and freed between replays
    static_x.copy_(scratch[:256, :256])
    del scratch
    g.replay()
    if step == 10:
        torch.cuda.empty_cache()
torch.cuda.synchronize()
print("sum after replays:", float(static_y.sum()))
del g
gc.collect()
del static_x, static_y, weight
torch.cuda.empty_cache()
torch.cuda.synchronize()
print("done")
