"""Capture rehearsal: capguard_cuda.rehearse as a decorator and as a context manager (the
package from this checkout, python/). Each region only launches kernels on the current stream:
both are capturable as they are."""
# capguard-args: --rehearse *
# expect-rehearsal: decode capturable
# expect-rehearsal: prefill capturable
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "python"))
import capguard_cuda  # noqa: E402  (this checkout's package, found through the line above)
import torch  # noqa: E402

x = torch.ones(1 << 10, device="cuda")
y = x * 2  # outside the regions: the allocator and the kernels are warm
y.add_(1)


@capguard_cuda.rehearse("decode")
def decode():
    y.mul_(2)


for _ in range(2):
    decode()
with capguard_cuda.rehearse("prefill"):
    y.add_(1)
torch.cuda.synchronize()
print("regions: ok")
