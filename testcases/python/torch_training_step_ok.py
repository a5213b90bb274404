"""A correct captured training step (warm-up on a side stream, static inputs, optimizer step in
the graph), replayed: capguard must report nothing."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 8)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss_fn = torch.nn.MSELoss()
static_x = torch.randn(32, 64, device="cuda")
static_y = torch.randn(32, 8, device="cuda")

side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        opt.zero_grad(set_to_none=True)
        loss_fn(model(static_x), static_y).backward()
        opt.step()
torch.cuda.current_stream().wait_stream(side)

g = torch.cuda.CUDAGraph()
opt.zero_grad(set_to_none=True)
with torch.cuda.graph(g):
    static_loss = loss_fn(model(static_x), static_y)
    static_loss.backward()
    opt.step()

for _ in range(10):
    static_x.copy_(torch.randn(32, 64, device="cuda"))
    g.replay()
torch.cuda.synchronize()
print("loss after replays:", static_loss.item())
