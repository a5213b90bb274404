"""The twin of torch_cublas_workspace_cleared (no finding expected): the cuBLAS workspaces are
cleared only after the graphs that captured them are destroyed."""
import gc

import torch

torch.manual_seed(0)
a = torch.randn(64, 65536, device="cuda", dtype=torch.bfloat16)
b = torch.randn(65536, 64, device="cuda", dtype=torch.bfloat16)
bias = torch.randn(64, device="cuda", dtype=torch.bfloat16)
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(2):
        c = a @ b
        d = torch.addmm(bias, a, b)
torch.cuda.current_stream().wait_stream(s)

g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g, stream=s):
    c = a @ b
    d = torch.addmm(bias, a, b)
for _ in range(3):
    g.replay()
torch.cuda.synchronize()
del g
gc.collect()
torch._C._cuda_clearCublasWorkspaces()
filler = [torch.zeros(1 << 20, device="cuda") for _ in range(64)]
torch.cuda.synchronize()
print("done")
