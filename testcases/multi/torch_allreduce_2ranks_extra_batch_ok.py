"""The correct twin of torch_allreduce_2ranks_extra_batch.py: both ranks capture batch sizes 8
and 16 (an NCCL all-reduce each) and replay them in the same order, so the job ends. capguard
must report nothing for either process."""
import signal

import torch
import torch.distributed as dist
from common import setup

rank, x = setup()
sizes = [8, 16]
graphs, out = {}, {}
for bs in sizes:
    graphs[bs] = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graphs[bs]):
        dist.all_reduce(x[:bs])
        out[bs] = x[:bs] * 2
signal.alarm(60)  # as its twin: a hang would be killed, not wait for the runner's timeout
for step in range(200):
    for bs in sizes:
        graphs[bs].replay()
torch.cuda.synchronize()
signal.alarm(0)
print(f"rank {rank}: out[16][0] = {out[16][0].item()}", flush=True)
# Graphs holding NCCL work go before the communicator (pytorch/pytorch#115388).
del graphs
torch.cuda.synchronize()
dist.destroy_process_group()
