"""A pageable CPU tensor copied to the GPU inside torch.cuda.graph. PyTorch refuses the
copy while the stream captures ("RuntimeError: Cannot copy between CPU and CUDA tensors during
CUDA graph capture unless the CPU tensor is pinned") before any CUDA call fails; the `with`
block's __exit__ still ends the capture while the exception propagates, CUDA makes a graph of
what was captured before it (the `x * 2`), and the caller (common.report) catches the exception.
The capture-ended-by-exception finding is on the line that raised, with the fix for what raised
(pin the tensor or copy before the capture), not on the `with` line. (unmeasured: to be recorded
on the GPU)"""
import torch
from common import report

x = torch.ones(1024, device="cuda")
host = torch.arange(1024, dtype=torch.float32)  # pageable
g = torch.cuda.CUDAGraph()


def capture():
    with torch.cuda.graph(g):
        y = x * 2
        z = y + host.to("cuda")  # expect: capture-ended-by-exception
        del z


report("capture", capture)
torch.cuda.synchronize()
print("the partial graph was made:", g is not None)
