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
# A graph holding NCCL work must go before its communicator: ncclCommDestroy waits for it
# (destroy_process_group hangs otherwise, pytorch/pytorch#115388).
del g
torch.cuda.synchronize()
dist.destroy_process_group()
