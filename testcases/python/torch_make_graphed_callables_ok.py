"""torch.cuda.make_graphed_callables done right (no finding expected): a small module is graphed
once (PyTorch warms it up on a side stream, then captures one forward and one backward graph
into a shared pool), then a short training loop (forward, loss, backward, optimizer step) replays
both graphs every step, with new data copied in by the graphed callable."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loss_fn = torch.nn.MSELoss()

sample = torch.randn(32, 64, device="cuda")
graphed = torch.cuda.make_graphed_callables(model, (sample,))

for step in range(10):
    x = torch.randn(32, 64, device="cuda")
    target = torch.randn(32, 10, device="cuda")
    optimizer.zero_grad(set_to_none=True)
    loss = loss_fn(graphed(x), target)
    loss.backward()
    optimizer.step()
torch.cuda.synchronize()
print(f"loss after 10 steps: {loss.item():.4f}")
