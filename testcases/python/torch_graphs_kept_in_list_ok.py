"""The same graph captured many times, every copy kept (no finding expected): the pattern of
PyTorch's test_memory_stats_of_multiple_generators_and_graphs (test/test_cuda.py). Lists of 1, 3,
then 10 graphs are made; each registers 1, 2 or 20 generator states, captures torch.rand(1) on a
new side stream with capture_begin()/capture_end() and is replayed once right after its capture;
every graph of a list stays alive until the whole list is dropped together (then gc.collect()
and empty_cache()). No graph is dropped while the next copy is captured: not churn."""
import gc

import torch


def capture_and_replay(graph):
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        graph.capture_begin()
        torch.rand(1, device="cuda")
        graph.capture_end()
    torch.cuda.current_stream().wait_stream(side)
    graph.replay()


def run(num_graphs, num_generators):
    before = torch.cuda.memory_stats()["active_bytes.all.current"]
    graphs = [torch.cuda.CUDAGraph() for _ in range(num_graphs)]
    default_generator = torch.cuda.default_generators[0]
    states = [default_generator.graphsafe_get_state()]
    states += [default_generator.clone_state() for _ in range(1, num_generators)]
    for graph in graphs:
        for state in states:
            graph.register_generator_state(state)
        capture_and_replay(graph)
    torch.cuda.synchronize()
    print(f"{num_graphs} graphs alive, {num_generators} generator states")
    graphs.clear()  # the whole list dropped together
    del states
    gc.collect()
    torch.cuda.empty_cache()
    after = torch.cuda.memory_stats()["active_bytes.all.current"]
    print(f"active bytes back to the baseline: {after == before}")


torch.rand(1, device="cuda")  # warm-up: the generator's kernel is loaded before any capture
for num_graphs, num_generators in ((1, 1), (3, 2), (10, 20)):
    run(num_graphs, num_generators)
print("done")
