"""A training loop that profiles five steps with torch.profiler (CPU and CUDA activities), then
calls `.item()` inside torch.cuda.graph. Under capguard the profile must keep its CUDA kernel
events (kineto shares CUPTI with capguard instead of being refused) and capguard must still
name the `.item()` line. Exits 1 if the profile has no CUDA kernel events."""
import sys

import torch
from common import report
from torch.profiler import ProfilerActivity, profile

x = torch.randn(256, 256, device="cuda")
for _ in range(3):
    y = torch.relu(x @ x) + 1
torch.cuda.synchronize()

with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(5):
        y = torch.relu(x @ x) + 1
    torch.cuda.synchronize()
kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
print(f"CUDA kernel events: {len(kernels)}")

g = torch.cuda.CUDAGraph()


def capture():
    with torch.cuda.graph(g):
        z = x * 2
        if z.sum().item() > 0:  # expect: sync-during-capture
            z += 1


report("capture", capture)
sys.exit(0 if kernels else 1)
