"""A tensor a graph reads is dropped after the capture, and PyTorch's caching allocator hands its
block to the next tensor of that size (vllm#43909): no cudaFree happens, and every replay reads
the new tensor's data instead. capguard sees the free and the reuse through the allocator's own
trace hook and reports the replay, the release (the `del`) and the new owner."""
import torch

torch.manual_seed(0)
static_x = torch.randn(1024, 1024, device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(2):
        static_y = static_x * 2 + 1
torch.cuda.current_stream().wait_stream(side)

g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    static_y = static_x * 2 + 1

g.replay()
torch.cuda.synchronize()
del static_x  # the graph still reads this block
batch = torch.full((1024, 1024), 7.0, device="cuda")  # the same block, handed out again
for step in range(3):
    g.replay()  # expect: replay-after-free
torch.cuda.synchronize()
print("replayed on the new tensor's data:", float(static_y[0, 0]), "(15.0: it read `batch`)")
