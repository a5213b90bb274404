"""Correct mode switch, the way SGLang does it (no finding expected): every batch size is captured
at start-up and some are replayed; when a request first needs hidden states, every size is
captured once more in the richer mode (the forward also returns its hidden states: one extra op),
from the same capture site, then the old set is dropped and serving replays the new graphs. 51 new
graphs after replays, but in one burst: a mode switch, not specialization growth."""
import gc

import torch

SIZES = sorted([1, 2, 4] + list(range(8, 249, 8)) + list(range(256, 513, 16)), reverse=True)

torch.manual_seed(0)
first = torch.nn.Linear(64, 128).cuda()
second = torch.nn.Linear(128, 64).cuda()
static_input = torch.zeros(SIZES[0], 64, device="cuda")


def forward(x, return_hidden):
    hidden = torch.relu(first(x))
    logits = second(hidden)
    if return_hidden:
        return logits, torch.tanh(hidden)  # the richer mode's extra op
    return (logits,)


def capture_all(return_hidden):
    pool = torch.cuda.graph_pool_handle()
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        for size in SIZES:
            forward(static_input[:size], return_hidden)
    torch.cuda.current_stream().wait_stream(warm)
    graphs, outputs = {}, {}
    for size in SIZES:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=pool):
            outputs[size] = forward(static_input[:size], return_hidden)
        graphs[size] = graph
    return graphs, outputs


def serve(graphs, outputs):
    for size in (1, 16, 128, 1, 16):
        static_input[:size].normal_()
        graphs[size].replay()
    torch.cuda.synchronize()
    return float(outputs[16][0].sum())


with torch.inference_mode():
    graphs, outputs = None, None
    for return_hidden in (False, True):  # one call site: the richer set comes from the same capture site
        new_graphs, new_outputs = capture_all(return_hidden)
        graphs, outputs = new_graphs, new_outputs  # the old mode's graphs are dropped here
        del new_graphs, new_outputs
        gc.collect()
        print(f"hidden states {return_hidden}: {len(graphs)} graphs, sum {serve(graphs, outputs):.3f}")
print("done")
