"""A Python program on the CUDA 12 runtime: a memset captured on a stream, then the
stream synchronized inside the capture. CUDA refuses the synchronize (900) and invalidates the
capture; capguard names this line, as it does on CUDA 13."""
import ctypes

import cudart12

rt = cudart12.load()
print(f"CUDA runtime {rt.version}")
x = rt.malloc(1 << 20)
s = rt.stream()
graph = ctypes.c_void_p()
rt.check(rt.lib.cudaStreamBeginCapture(s, 0), "cudaStreamBeginCapture")
rt.check(rt.lib.cudaMemsetAsync(x, 0, ctypes.c_size_t(1 << 20), s), "cudaMemsetAsync")
rt.check(rt.lib.cudaStreamSynchronize(s), "cudaStreamSynchronize")  # expect: sync-during-capture
rt.check(rt.lib.cudaStreamEndCapture(s, ctypes.byref(graph)), "cudaStreamEndCapture")
