"""Graph coverage of a serving loop: graphs are captured for batch sizes 1, 2, 4 and 8 only;
requests of other sizes (3, 5, 6, 7) run the model eagerly. The coverage section names the
model's line for those eager launches; its twin pads each request to a captured size."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(128, 128), torch.nn.ReLU(), torch.nn.Linear(128, 64)).cuda()
sizes = [1, 2, 4, 8]
graphs, inputs, outputs = {}, {}, {}


def forward(x):
    return model(x)  # expect-eager


with torch.no_grad():
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        for size in sizes:
            forward(torch.zeros(size, 128, device="cuda"))
    torch.cuda.current_stream().wait_stream(warm)
    for size in sizes:
        inputs[size] = torch.zeros(size, 128, device="cuda")
        graphs[size] = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graphs[size]):
            outputs[size] = forward(inputs[size])

    total = 0.0
    for request in [1, 3, 2, 5, 4, 8, 6, 7, 1, 2] * 5:
        x = torch.randn(request, 128, device="cuda")
        if request in graphs:
            inputs[request].copy_(x)
            graphs[request].replay()
            y = outputs[request]
        else:
            y = forward(x)  # no graph for this size: eager
        total += float(y.sum())
    print(f"total {total:.3f}")
