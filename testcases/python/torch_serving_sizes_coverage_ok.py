"""Twin of torch_serving_sizes_coverage: each request is padded to the next captured size, so
every step after warm-up replays a graph."""
# expect-coverage: full
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(128, 128), torch.nn.ReLU(), torch.nn.Linear(128, 64)).cuda()
sizes = [1, 2, 4, 8]
graphs, inputs, outputs = {}, {}, {}

with torch.no_grad():
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        for size in sizes:
            model(torch.zeros(size, 128, device="cuda"))
    torch.cuda.current_stream().wait_stream(warm)
    for size in sizes:
        inputs[size] = torch.zeros(size, 128, device="cuda")
        graphs[size] = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graphs[size]):
            outputs[size] = model(inputs[size])
    requests = [torch.randn(n, 128, device="cuda") for n in [1, 3, 2, 5, 4, 8, 6, 7, 1, 2] * 5]

    total = 0.0
    for x in requests:
        size = next(s for s in sizes if s >= x.shape[0])
        inputs[size].zero_()  # padded: the rows past the request stay zero
        inputs[size][: x.shape[0]].copy_(x)
        graphs[size].replay()
        total += float(outputs[size][: x.shape[0]].sum())
    print(f"total {total:.3f}")
