"""graph-rebuilt-every-step in PyTorch (pytorch#171672: "reduce-overhead 10x slower than eager",
cudaStreamEndCapture, cudaGraphInstantiateWithFlags and cudaGraphDestroy every iteration): a
30-step loop that captures the same 6-layer MLP (Linear + ReLU, small dims) into a new
torch.cuda.CUDAGraph every step, replays it once and drops it. Every capture is the same graph;
the fix is to capture once before the loop and replay that graph every step."""
import torch

torch.manual_seed(0)
layers = []
for _ in range(6):
    layers += [torch.nn.Linear(128, 128), torch.nn.ReLU()]
model = torch.nn.Sequential(*layers).cuda()
static_x = torch.randn(32, 128, device="cuda")

with torch.no_grad():
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        for _ in range(2):
            model(static_x)
    torch.cuda.current_stream().wait_stream(warm)

    total = 0.0
    for step in range(30):
        static_x.normal_()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):  # expect: graph-rebuilt-every-step
            y = model(static_x)
        g.replay()
        total += float(y.sum())
        del g, y  # the graph goes after its one replay
torch.cuda.synchronize()
print(f"30 steps, sum of outputs {total:.3f}")
