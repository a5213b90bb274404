"""pytorch#193402: two graphs captured on one stream share its cuBLAS workspace (PyTorch keeps it
per handle and stream in its caching allocator), even with separate memory pools. Destroying one
of them (g.reset(), del g) clears the workspaces of its capture stream (since pytorch#175276);
the other graph, still live, keeps the raw workspace address in its GEMM and replays into a
block the allocator has handed to a new tensor. The twin captures each graph on its own stream.
Pending: PyTorch 2.11 (the GPU machine's) does not clear a stream's workspaces at a graph's
destruction: on the H200 the reset freed nothing (the trace holds no allocator free), the replay
was sound, and capguard rightly said nothing. It belongs in python/ where the PyTorch run has
pytorch#175276 (2.14 nightlies); the release row naming it is unit-tested."""
import torch

torch.manual_seed(0)
# Long, thin bf16 GEMMs: cuBLAS splits K and its kernels take the workspace as an argument.
a = torch.randn(64, 65536, device="cuda", dtype=torch.bfloat16)
b = torch.randn(65536, 64, device="cuda", dtype=torch.bfloat16)
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(2):
        c = a @ b  # warm-up: the workspace of (handle, s) is made here
torch.cuda.current_stream().wait_stream(s)

train = torch.cuda.CUDAGraph()
with torch.cuda.graph(train, stream=s):
    c = a @ b
evaluate = torch.cuda.CUDAGraph()
with torch.cuda.graph(evaluate, stream=s):
    e = a @ b
train.replay()
evaluate.replay()
torch.cuda.synchronize()
evaluate.reset()  # clears the workspaces of s, which train's GEMM still uses
filler = [torch.zeros(1 << 20, device="cuda") for _ in range(64)]  # the freed block, reused
train.replay()  # expect: replay-after-free
torch.cuda.synchronize()
print("replayed; a filler tensor may now share the GEMM's workspace:", float(filler[0].sum()))
