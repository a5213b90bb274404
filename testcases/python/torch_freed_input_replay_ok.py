"""The twin of torch_freed_input_replay (no finding expected): new data goes into the graph's
static input with copy_, tensors the graph does not hold come and go between replays (their
blocks are reused), the graph's output is dropped (its private pool keeps the block for the
graph), and the graph is destroyed before its input is dropped."""
import gc

import torch

torch.manual_seed(0)
static_x = torch.randn(1024, 1024, device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(2):
        static_y = static_x * 2 + 1
torch.cuda.current_stream().wait_stream(side)

g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    static_y = static_x * 2 + 1

for step in range(5):
    batch = torch.full((1024, 1024), float(step), device="cuda")
    static_x.copy_(batch)
    del batch  # not the graph's: its block goes to the next step's batch
    g.replay()
torch.cuda.synchronize()
print("last replay:", float(static_y[0, 0]))
del static_y  # the graph's output, in its private pool
g.replay()
torch.cuda.synchronize()
del g
gc.collect()
del static_x
again = torch.zeros(1024, 1024, device="cuda")
torch.cuda.synchronize()
print("done")
