"""Correct start-up of an inference server, the way vLLM does it (no finding expected): one CUDA
graph per batch size of vLLM's default list (1, 2, 4, then 8..248 step 8, then 256..512 step 16:
51 sizes), captured largest first into one shared memory pool (torch.cuda.graph_pool_handle()),
each a small MLP forward on a slice of static input buffers, all warmed up before the captures
and every graph kept in a dict; serving then replays a few sizes (most are never replayed at this
load). 51 specializations captured in one burst and kept alive: neither churn nor growth."""
import torch

SIZES = sorted([1, 2, 4] + list(range(8, 249, 8)) + list(range(256, 513, 16)), reverse=True)
assert len(SIZES) == 51

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 64)).cuda().eval()
static_input = torch.zeros(SIZES[0], 64, device="cuda")  # the largest batch; each size reads a slice
pool = torch.cuda.graph_pool_handle()
graphs = {}
outputs = {}

with torch.inference_mode():
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        for size in SIZES:
            model(static_input[:size])
    torch.cuda.current_stream().wait_stream(warm)

    for size in SIZES:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=pool):
            outputs[size] = model(static_input[:size])
        graphs[size] = graph
    print(f"captured {len(graphs)} batch sizes")

    for size in (1, 8, 64, 1, 8, 512, 64):
        static_input[:size].copy_(torch.randn(size, 64, device="cuda"))
        graphs[size].replay()
        print(f"batch {size}: output sum {float(outputs[size].sum()):.3f}")
torch.cuda.synchronize()
print("done")
