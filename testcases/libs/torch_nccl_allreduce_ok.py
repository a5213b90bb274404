"""An NCCL all-reduce captured in torch.cuda.graph, done right, with a one-process NCCL process
group (PyTorch ships NCCL): the communicator is created by warm-up collectives on a side stream
before the capture, then the graph is replayed. capguard must report nothing."""
import os
import tempfile

import torch
import torch.distributed as dist

store = os.path.join(tempfile.mkdtemp(prefix="capguard-nccl-"), "store")
dist.init_process_group("nccl", init_method=f"file://{store}", rank=0, world_size=1,
                        device_id=torch.device("cuda:0"))
x = torch.ones(1 << 16, device="cuda")

side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        dist.all_reduce(x)
torch.cuda.current_stream().wait_stream(side)
torch.cuda.synchronize()

g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    dist.all_reduce(x)
    y = x * 2

for _ in range(3):
    g.replay()
torch.cuda.synchronize()
print("y[0] after replays:", y[0].item())
dist.destroy_process_group()
