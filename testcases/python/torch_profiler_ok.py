"""torch.profiler around a few steps of a model that replays a CUDA graph, profiled twice (with
TEARDOWN_CUPTI=1 kineto tears CUPTI down after each profile and subscribes again). The profile
must count CUDA kernel events each time, under capguard as natively (20 and 20 on the H100);
exits 1 if one has none. Twin: torch_profiler_item_in_capture."""
import sys

import torch
from torch.profiler import ProfilerActivity, profile

x = torch.randn(256, 256, device="cuda")
static_out = torch.empty_like(x)
stream = torch.cuda.Stream()
stream.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(stream):
    for _ in range(3):
        static_out.copy_(torch.relu(x @ x))
torch.cuda.current_stream().wait_stream(stream)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    static_out.copy_(torch.relu(x @ x))

counts = []
for _ in range(2):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(4):
            g.replay()
            y = static_out + 1
        torch.cuda.synchronize()
    counts.append(sum(e.device_type == torch.autograd.DeviceType.CUDA for e in prof.events()))
print(f"CUDA kernel events per profile: {counts}")
sys.exit(0 if all(counts) else 1)
