"""graph-argument-frozen, the Megatron-LM#5697 pattern: a sampler keeps its own random state on
the host (a seed and a philox offset it advances per call, as an RNG tracker outside PyTorch's
graph-safe generators does) and passes both to its kernel by value, as FlashInfer's sampling
kernels take them. Nothing registers that state with the graph, so the offset captured is
replayed forever: every replay draws the same numbers. (PyTorch itself refuses to read a
generator's offset during capture; a host-side counter is how the mistake is made.) The twin
(torch_registered_generator_ok.py) draws from a generator registered with the graph, whose state
PyTorch's graph-safe RNG fills before each replay."""
import cupy as cp
import torch

noise = cp.RawKernel(r'''
extern "C" __global__ void noise(float* out, unsigned long long seed, unsigned long long offset, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (float)((seed * 6364136223846793005ull + offset + i) % 1000) / 1000.0f;
}
''', "noise")
seed, state = 1234, {"offset": 0}
n = 1024
out = torch.empty(n, device="cuda")


def sample():
    offset = state["offset"]
    state["offset"] = offset + 4  # the sampler advances its offset, as philox samplers do
    stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    with stream:
        noise((n // 256,), (256,), (out.data_ptr(), cp.uint64(seed), cp.uint64(offset), cp.int32(n)))


side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):  # warm-up: the offset changes every run
        sample()
torch.cuda.current_stream().wait_stream(side)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):  # expect: graph-argument-frozen
    sample()
draws = set()
for _ in range(5):
    g.replay()
    draws.add(round(float(out.sum()), 3))
print(f"{len(draws)} distinct draws in 5 replays")
