"""Tensor-parallel style: two ranks under torchrun each capture an NCCL all-reduce in
torch.cuda.graph (communicator warmed up first) and replay it together. capguard must report
nothing for either process."""
import torch
import torch.distributed as dist
from common import setup

rank, x = setup()
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    dist.all_reduce(x)
    y = x * 2
for _ in range(3):
    g.replay()
torch.cuda.synchronize()
print(f"rank {rank}: y[0] = {y[0].item()}")
dist.destroy_process_group()
