"""graph-argument-frozen, the Megatron-LM#5697 pattern: a sampler draws from a private
torch.Generator whose seed and philox offset it reads on the host and passes to its kernel by
value (as FlashInfer's sampling kernels take them). The generator is not registered with the
graph, so the offset captured is replayed forever: every replay draws the same numbers. The
twin (torch_registered_generator_ok.py) registers the generator and lets PyTorch's graph-safe RNG
fill the state before each replay."""
import cupy as cp
import torch

noise = cp.RawKernel(r'''
extern "C" __global__ void noise(float* out, unsigned long long seed, unsigned long long offset, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (float)((seed * 6364136223846793005ull + offset + i) % 1000) / 1000.0f;
}
''', "noise")
gen = torch.Generator(device="cuda")
gen.manual_seed(1234)
n = 1024
out = torch.empty(n, device="cuda")


def sample():
    offset = gen.get_offset()
    gen.set_offset(offset + 4)  # the sampler advances its generator, as philox samplers do
    stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    with stream:
        noise((n // 256,), (256,), (out.data_ptr(), cp.uint64(gen.initial_seed()), cp.uint64(offset), cp.int32(n)))


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
