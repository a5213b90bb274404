"""graph-rebuilt-every-step where only the input moved: every step makes a fresh input tensor and
captures the model again on it (rebinding the static input instead of copying into it), replays the
new graph once and drops it: 30 steps. Consecutive captures differ only in the input's address
(the new tensor is allocated while the previous one is alive), the cause CUDA graph trees report as
"static input data pointer changed". The fix: allocate the input once and copy each step's batch
into it (static_input.copy_(batch)), then replay one graph."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128)).cuda()

with torch.no_grad():
    x = torch.randn(32, 128, device="cuda")
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        for _ in range(2):
            model(x)
    torch.cuda.current_stream().wait_stream(warm)

    total = 0.0
    for step in range(30):
        x = torch.randn(32, 128, device="cuda")  # this step's batch, in a new tensor
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):  # expect: graph-rebuilt-every-step
            y = model(x)
        g.replay()
        total += float(y.sum())
        del g, y
torch.cuda.synchronize()
print(f"30 steps, sum of outputs {total:.3f}")
