"""A torch.compile'd function called for the first time inside torch.cuda.graph. Its
first call compiles: Dynamo and Inductor copy guards and constants between CPU and CUDA tensors,
which PyTorch refuses while the stream captures ("RuntimeError: Cannot copy between CPU and CUDA
tensors during CUDA graph capture unless the CPU tensor is pinned") before any CUDA call fails.
The `with` block's __exit__ still ends the capture while the exception propagates, CUDA makes a
graph of what was captured before it (the `x * 2`), and the caller (common.report) catches the
exception and goes on: the graph is partial, and capguard used to call the capture "ok". The
finding is at the line that raised, the `with` line whose __exit__ ended it beside."""
import torch
from common import report

x = torch.ones(1024, device="cuda")
g = torch.cuda.CUDAGraph()


@torch.compile
def scale(t):
    return torch.nn.functional.gelu(t) * 3 + 1


def capture():
    with torch.cuda.graph(g):
        y = x * 2
        z = scale(y)  # expect: capture-ended-by-exception
        del z


report("capture", capture)
torch.cuda.synchronize()
print("the partial graph was made:", g is not None)
