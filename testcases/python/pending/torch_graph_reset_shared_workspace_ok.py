"""The twin of torch_graph_reset_shared_workspace: each graph is captured on a stream of its own,
so destroying one clears only its own stream's cuBLAS workspace; the other replays safely."""
import torch

torch.manual_seed(0)
a = torch.randn(64, 65536, device="cuda", dtype=torch.bfloat16)
b = torch.randn(65536, 64, device="cuda", dtype=torch.bfloat16)
train_stream, eval_stream = torch.cuda.Stream(), torch.cuda.Stream()
for s in (train_stream, eval_stream):
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            c = a @ b
    torch.cuda.current_stream().wait_stream(s)

train = torch.cuda.CUDAGraph()
with torch.cuda.graph(train, stream=train_stream):
    c = a @ b
evaluate = torch.cuda.CUDAGraph()
with torch.cuda.graph(evaluate, stream=eval_stream):
    e = a @ b
train.replay()
evaluate.replay()
torch.cuda.synchronize()
evaluate.reset()  # clears eval_stream's workspace only
filler = [torch.zeros(1 << 20, device="cuda") for _ in range(64)]
train.replay()
torch.cuda.synchronize()
print("replayed:", float(c.float().sum()))
