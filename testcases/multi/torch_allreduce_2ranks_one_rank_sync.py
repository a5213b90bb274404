"""Two ranks under torchrun capture an NCCL all-reduce in torch.cuda.graph; rank 1 alone also
calls .item() inside its capture (a synchronize of the capturing stream: 900). capguard must
report it once, for rank 1's process only. No graph is replayed (rank 0's would wait forever
for rank 1's all-reduce)."""
import torch
import torch.distributed as dist
from common import report, setup

rank, x = setup()
g = torch.cuda.CUDAGraph()


def capture():
    with torch.cuda.graph(g):
        dist.all_reduce(x)
        if rank == 1 and x.sum().item() > 0:  # expect: sync-during-capture
            x.add_(1)


report(f"rank {rank} capture", capture)
# Rank 0's graph holds NCCL work: it must go before the communicator (pytorch/pytorch#115388).
del g
torch.cuda.synchronize()
dist.destroy_process_group()
