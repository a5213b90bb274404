"""Capture rehearsal: a PyTorch training step in torch.cuda.nvtx.range("train_step"), not
warmed up, run eagerly 3 times. One run names every reason it cannot be captured: .item() syncs every
execution (not capturable); only the first creates cuBLAS handles (this thread's, and the autograd
thread's, with no line of this file on its stack). PyTorch's allocators (device, pinned host) make
no finding: they allocate in relaxed mode while their stream captures (.item()'s first buffer)."""
# expect-elsewhere: unsafe-call-during-capture*4
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
        loss = torch.nn.functional.mse_loss(model(x), target)  # expect: unsafe-call-during-capture*2
        loss.backward()
        optimizer.step()
        losses.append(loss.item())  # expect: sync-during-capture
print("train_step: ok", losses[-1])
