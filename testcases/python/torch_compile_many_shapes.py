"""graph-specialization-growth through torch.compile(mode="reduce-overhead"): the compiled model is
called with 12 distinct batch sizes, each new one arriving between calls with sizes seen before.
Dynamo recompiles once with a dynamic batch dimension and CUDA graph trees record one graph per
distinct size ("recording cudagraph tree for symint key N"; PyTorch warns past 8, #162696): the
capture site keeps producing specializations while earlier ones replay. Each new size is called
twice in a row (graph trees warm a new size up on its first call and record it on the next), then
two earlier sizes are called. torch._dynamo.config's cache_size_limit (recompile_limit in newer
releases) is raised to 64 so that Dynamo never falls back to eager. The capture's innermost
frame in this file is the line that calls the compiled model."""
import torch

for name in ("cache_size_limit", "recompile_limit"):
    if hasattr(torch._dynamo.config, name):
        setattr(torch._dynamo.config, name, 64)

DISTINCT = [3, 17, 5, 40, 9, 64, 22, 11, 96, 33, 7, 128]

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 64)).cuda()
compiled = torch.compile(model, mode="reduce-overhead")


def batches():
    for i, size in enumerate(DISTINCT):
        yield size
        yield size
        for j in range(2):
            yield DISTINCT[(i * 5 + j) % (i + 1)]


with torch.no_grad():
    calls = 0
    total = 0.0
    for size in batches():
        x = torch.randn(size, 64, device="cuda")
        y = compiled(x)  # expect: graph-specialization-growth
        total += float(y.sum())
        calls += 1
torch.cuda.synchronize()
print(f"{calls} calls over {len(DISTINCT)} batch sizes, sum {total:.3f}")
