"""Twin of torch_unregistered_generator: the private generator is registered with the graph
(g.register_generator_state) and drawn from with a PyTorch op, whose graph-safe philox state
PyTorch fills before each replay: every replay draws new numbers, and nothing is frozen."""
import torch

gen = torch.Generator(device="cuda")
gen.manual_seed(1234)
out = torch.empty(1024, device="cuda")


def sample():
    out.uniform_(generator=gen)


side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        sample()
torch.cuda.current_stream().wait_stream(side)
g = torch.cuda.CUDAGraph()
g.register_generator_state(gen)
with torch.cuda.graph(g):
    sample()
draws = set()
for _ in range(5):
    g.replay()
    draws.add(round(float(out.sum()), 3))
print(f"{len(draws)} distinct draws in 5 replays")
