"""A graph captured with a matmul holds cuBLAS's workspace, which PyTorch keeps per (handle,
stream) in its caching allocator. torch._C._cuda_clearCublasWorkspaces() (what cudagraph trees
and benchmark clean-ups call to give memory back) drops it while the graph lives; the next
tensor gets the block and the replay's GEMM scribbles over it (pytorch#193402, vllm-omni#6587).
Warm-up and capture on one stream: the workspace is allocated eagerly, in the default pool."""
import torch

torch.manual_seed(0)
# Long, thin bf16 GEMMs: cuBLAS splits K and its kernels take the workspace as an argument.
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

g.replay()
torch.cuda.synchronize()
torch._C._cuda_clearCublasWorkspaces()  # the graph still holds the workspace
filler = [torch.zeros(1 << 20, device="cuda") for _ in range(64)]  # the freed block, reused
g.replay()  # expect: replay-after-free
torch.cuda.synchronize()
print("replayed; a filler tensor now shares the GEMM's workspace:", float(filler[0].sum()))
