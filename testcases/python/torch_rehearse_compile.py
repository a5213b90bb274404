"""Capture rehearsal of torch.compile's first calls, what vLLM and SGLang users meet when
warm-up took another path: the region "decode" calls a compiled model, not warmed up, three times.
The first execution compiles (Inductor synchronizes), creates the cuBLAS handle and autotunes its
Triton kernels (timing events queried): capturable after 1 warm-up execution. The region "captured"
holds a real capture; its set-up (a synchronize, empty_cache) runs before it begins: no finding."""
# capguard-args: --rehearse decode --rehearse captured
# expect-rehearsal: decode capturable_after_warmup 1
# expect-rehearsal: captured capturable
import os, tempfile  # noqa: E401  (a cold compile every run: a warm cache skips the autotuning)
os.environ.update({k: tempfile.mkdtemp(prefix="capguard-" + k) for k in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")})
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.GELU(), torch.nn.Linear(512, 512)).cuda()
compiled = torch.compile(model)
x = torch.randn(16, 512, device="cuda")
for _ in range(3):
    with torch.cuda.nvtx.range("decode"):
        y = compiled(x)  # expect: sync-during-capture*17, unsafe-call-during-capture*2, captured-event-query*2
torch.cuda.synchronize()
g = torch.cuda.CUDAGraph()
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):  # warm-up on a side stream, as PyTorch's docs do
    for _ in range(2):
        model(x)
torch.cuda.current_stream().wait_stream(side)
with torch.cuda.nvtx.range("captured"):
    with torch.cuda.graph(g):
        out = model(x)
g.replay()
torch.cuda.synchronize()
print("decode: ok", float(y.sum()), float(out.sum()))
