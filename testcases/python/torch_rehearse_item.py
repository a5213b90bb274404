"""Capture rehearsal: a decode step marked with torch.cuda.nvtx.range("decode"), run
eagerly three times, reads a value back with .item() every time (a copy to the host, then a
synchronize of the stream). Rehearsed in global mode, the synchronize would invalidate a capture
of the step on every execution: not capturable."""
# capguard-args: --rehearse decode
# expect-rehearsal: decode not_capturable
import torch

x = torch.ones(1 << 10, device="cuda")
(x * 2).sum().item()  # outside the region: the allocator and the kernels are warm
for _ in range(3):
    with torch.cuda.nvtx.range("decode"):
        y = x * 2
        total = y.sum().item()  # expect: sync-during-capture
print("decode: ok", total)
