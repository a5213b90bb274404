"""A mixed process: PyTorch on its CUDA 13 runtime and a CUDA 12 library (here the
CUDA 12.9 runtime, driven directly) in one program. The CUDA 12 side synchronizes its capturing
stream; the report names both runtimes and the line, whichever runtime made the call."""
import ctypes

import cudart12
import torch

rt = cudart12.load()  # loaded before CUDA starts: capguard sees both runtimes at attach
y = torch.ones(1024, device="cuda")  # PyTorch's own work, outside any capture
torch.cuda.synchronize()
x = rt.malloc(1 << 20)
s = rt.stream()
graph = ctypes.c_void_p()
rt.check(rt.lib.cudaStreamBeginCapture(s, 0), "cudaStreamBeginCapture")
rt.check(rt.lib.cudaMemsetAsync(x, 0, ctypes.c_size_t(1 << 20), s), "cudaMemsetAsync")
rt.check(rt.lib.cudaStreamSynchronize(s), "cudaStreamSynchronize")  # expect: sync-during-capture
rt.check(rt.lib.cudaStreamEndCapture(s, ctypes.byref(graph)), "cudaStreamEndCapture")
print("torch sum", float(y.sum()))
