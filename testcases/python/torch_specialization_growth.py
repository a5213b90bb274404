"""graph-specialization-growth in PyTorch: a server that captures a graph the first time a batch
size arrives, while it is already replaying the sizes it has seen, the way CUDA graph trees record
one graph per distinct input size (PyTorch warns past 8 distinct sizes, #162696; a text-embedding
job measured 318 sizes in 333 batches). 12 sizes arrive over the run, each new one after replays
of known ones. The hidden width (1024) makes every size's kernels launch another grid, so each
size is a new specialization of the one capture site. The fix: pad batches to a few bucket sizes,
or capture the sizes up front (torch_batch_sizes_startup_ok)."""
import torch

DISTINCT = [3, 17, 5, 40, 9, 64, 22, 11, 96, 33, 7, 128]

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 64)).cuda().eval()
static_input = torch.zeros(max(DISTINCT), 64, device="cuda")
graphs = {}
outputs = {}


def capture(size):
    """A size seen for the first time: warm it up, then record its graph."""
    x = static_input[:size]
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        model(x)
    torch.cuda.current_stream().wait_stream(warm)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):  # expect: graph-specialization-growth
        outputs[size] = model(x)
    graphs[size] = graph


def requests():
    """A new size every fourth request; the three in between are sizes already seen."""
    for i, size in enumerate(DISTINCT):
        yield size
        for j in range(3):
            yield DISTINCT[(i * 5 + j) % (i + 1)]


with torch.inference_mode():
    served = 0
    for size in requests():
        if size not in graphs:
            capture(size)
        static_input[:size].normal_()
        graphs[size].replay()
        served += 1
    torch.cuda.synchronize()
print(f"{served} requests, {len(graphs)} batch sizes captured")
