"""Two ranks under torchrun capture a graph per batch size, each an NCCL all-reduce; rank 1
captures batch size 8 as well as 16, rank 0 only 16, and each replays its own graphs every
step. Rank 1 runs two all-reduces a step where rank 0 runs one: the job hangs at replay, with no
error, until the alarm below kills the ranks (a launcher's timeout, as in production; SIGALRM,
default action). capguard must name the graph rank 1 alone captured and the replay where the
ranks part (both at the capture's line, rank 1's process), from traces without their end."""
import signal

import torch
from common import setup

rank, x = setup()
sizes = [8, 16] if rank == 1 else [16]  # the mistake: rank 1 captures one batch size more
graphs, out = {}, {}
for bs in sizes:
    graphs[bs] = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graphs[bs]):  # expect: rank-collective-mismatch*2
        torch.distributed.all_reduce(x[:bs])
        out[bs] = x[:bs] * 2
print(f"rank {rank}: captured {sizes}", flush=True)
signal.alarm(60)  # the job's timeout: the replays below never finish
for step in range(200):
    for bs in sizes:
        graphs[bs].replay()
torch.cuda.synchronize()
print(f"rank {rank}: finished (not expected)", flush=True)
