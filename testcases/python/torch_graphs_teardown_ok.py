"""Correct sleep/wake cycle of an RL engine (no finding expected): vLLM or SGLang colocated with
training (vllm#45648, trl#3968) drops every graph and the memory pool when it sleeps and captures
the whole set again when it wakes. Here a set of 16 batch sizes is captured into one pool and some
replayed, then every graph is dropped together (del, gc.collect(), empty_cache()), and the set is
captured again: three teardowns, four captures of the same set from one site."""
import gc

import torch

SIZES = [256, 192, 128, 96, 64, 48, 32, 24, 16, 12, 8, 6, 4, 3, 2, 1]

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 64)).cuda().eval()
static_input = torch.zeros(SIZES[0], 64, device="cuda")


def wake():
    """Every size warmed up, then captured into a fresh shared pool."""
    pool = torch.cuda.graph_pool_handle()
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        for size in SIZES:
            model(static_input[:size])
    torch.cuda.current_stream().wait_stream(warm)
    graphs, outputs = {}, {}
    for size in SIZES:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=pool):
            outputs[size] = model(static_input[:size])
        graphs[size] = graph
    return graphs, outputs


with torch.inference_mode():
    for cycle in range(4):  # wake, serve, sleep; the last sleep is the exit
        graphs, outputs = wake()
        for size in SIZES[cycle::5]:
            static_input[:size].normal_()
            graphs[size].replay()
        torch.cuda.synchronize()
        print(f"cycle {cycle}: {len(graphs)} graphs captured, sum {float(outputs[SIZES[cycle]].sum()):.3f}")
        del graphs, outputs  # sleep: every graph and its pool go together
        gc.collect()
        torch.cuda.empty_cache()
print("done")
