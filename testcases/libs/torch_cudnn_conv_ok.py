"""cuDNN convolutions through PyTorch captured in torch.cuda.graph, done right: cuDNN picks its
algorithms and workspaces during warm-up iterations on a side stream, then the forward and
backward passes of a small conv net are captured and replayed. capguard must report nothing."""
import torch

torch.backends.cudnn.enabled = True
torch.backends.cudnn.benchmark = False
assert torch.backends.cudnn.is_available()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(),
                            torch.nn.Conv2d(16, 8, 3, padding=1)).cuda()
static_x = torch.randn(8, 3, 32, 32, device="cuda")

side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        model(static_x).sum().backward()
torch.cuda.current_stream().wait_stream(side)

g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    static_out = model(static_x)
    static_out.sum().backward()

for _ in range(5):
    static_x.copy_(torch.randn(8, 3, 32, 32, device="cuda"))
    g.replay()
torch.cuda.synchronize()
print("out[0,0,0,0] after replays:", static_out[0, 0, 0, 0].item())
