"""Two ranks under torchrun capture an NCCL all-reduce in torch.cuda.graph and both call .item()
inside their capture (a synchronize of the capturing stream: 900). capguard must report it as
one finding "on 2 of 2 ranks": two findings of one group, one per rank's process.
No graph is replayed (the captures were invalidated)."""
import torch
import torch.distributed as dist
from common import report, setup

rank, x = setup()
g = torch.cuda.CUDAGraph()


def capture():
    with torch.cuda.graph(g):
        dist.all_reduce(x)
        if x.sum().item() > 0:  # expect: sync-during-capture*2
            x.add_(1)


report(f"rank {rank} capture", capture)
del g
torch.cuda.synchronize()
dist.destroy_process_group()
