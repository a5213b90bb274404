"""`.tolist()` inside torch.cuda.graph: the values are copied to pageable CPU memory,
which PyTorch refuses while the stream captures ("Cannot copy between CPU and CUDA tensors during
CUDA graph capture unless the CPU tensor is pinned") before any CUDA call
fails; __exit__ ends the capture while the exception propagates. The finding belongs on the
`.tolist()` line, with the fix for a value read back: keep it on the GPU, read it after replay().
Pending (testcases/README.md): written without a GPU; should CUDA refuse the copy's synchronize
first, the GPU run shows sync-during-capture (Tensor.tolist()) instead, and the expectation moves
with it. Moved to python/ once recorded."""
import torch
from common import report

x = torch.ones(8, device="cuda")
g = torch.cuda.CUDAGraph()


def capture():
    with torch.cuda.graph(g):
        y = x * 2
        values = y.tolist()  # expect: capture-ended-by-exception
        del values


report("capture", capture)
torch.cuda.synchronize()
