"""torch.compile(mode="reduce-overhead"): Inductor fuses the model into Triton kernels and
PyTorch's CUDA-graph trees capture and replay them, the way compiled inference and training
loops run. capguard must report nothing."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 8)).cuda()
compiled = torch.compile(model, mode="reduce-overhead")
x = torch.randn(32, 64, device="cuda")
with torch.no_grad():
    for _ in range(6):  # the first calls warm up and record; the later ones replay the graph
        y = compiled(x * 0.5 + 1)
torch.cuda.synchronize()
print("sum of the last output:", y.sum().item())
