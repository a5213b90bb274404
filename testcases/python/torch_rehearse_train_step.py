"""Capture rehearsal (issue 19): a whole PyTorch training step marked with
torch.cuda.nvtx.range("train_step"), nothing warmed up before it, run eagerly three times. One run
names every reason the step cannot be captured: the loss read back with .item() for logging on
every execution (a synchronize: not capturable), and what only the first execution does (the
cuBLAS handle and workspace of the first matmul, the caching allocator's first allocations, the
optimizer's state), which warm-up would take out of the capture."""
# capguard-args: --rehearse train_step
# expect-rehearsal: train_step not_capturable
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
x = torch.randn(64, 256, device="cuda")
target = torch.randn(64, 1, device="cuda")
losses = []
for _ in range(3):
    with torch.cuda.nvtx.range("train_step"):
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())  # expect: sync-during-capture
print("train_step: ok", losses[-1])
