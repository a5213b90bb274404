"""Twin of torch_pageable_copy_in_capture: the CPU tensor is pinned, so its copy to the GPU inside
torch.cuda.graph is captured as a memcpy node (the host buffer is read at each replay); the graph
is whole and replayed. Nothing is reported. (unmeasured: to be recorded on the GPU)"""
import torch

x = torch.ones(1024, device="cuda")
host = torch.arange(1024, dtype=torch.float32).pin_memory()
g = torch.cuda.CUDAGraph()

with torch.cuda.graph(g):
    y = x * 2
    z = y + host.to("cuda", non_blocking=True)

g.replay()
torch.cuda.synchronize()
print("replayed:", float(z[1]))
