"""Twin of torch_serving_sizes_coverage: each request is padded to the next captured size when it
is made, so every step after warm-up copies it in (a memcpy, no kernel), replays a graph and
copies the rows out: no kernel runs outside the graphs."""
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
    requests = []
    for n in [1, 3, 2, 5, 4, 8, 6, 7, 1, 2] * 5:  # padded with zero rows when made
        size = next(s for s in sizes if s >= n)
        padded = torch.zeros(size, 128, device="cuda")
        padded[:n] = torch.randn(n, 128, device="cuda")
        requests.append((n, padded))
    torch.cuda.synchronize()

    results = []
    for n, x in requests:
        size = x.shape[0]
        inputs[size].copy_(x)
        graphs[size].replay()
        results.append(outputs[size][:n].cpu())  # a copy to the host, no kernel
    print(f"total {sum(float(r.sum()) for r in results):.3f}")
