"""The correct twin of cuda12_sync_in_capture.py: the same capture on the CUDA 12 runtime,
ended, instantiated and replayed; the synchronize comes after the capture."""
import ctypes

import cudart12

rt = cudart12.load()
print(f"CUDA runtime {rt.version}")
x = rt.malloc(1 << 20)
s = rt.stream()
graph, exec_ = ctypes.c_void_p(), ctypes.c_void_p()
info = ctypes.c_int()
rt.check(rt.lib.cudaStreamBeginCapture(s, 0), "cudaStreamBeginCapture")
rt.check(rt.lib.cudaMemsetAsync(x, 0, ctypes.c_size_t(1 << 20), s), "cudaMemsetAsync")
# cudaStreamGetCaptureInfo is _v2 in 12.x (13.0 dropped it): decoded with 12.x's layout.
rt.check(rt.lib.cudaStreamGetCaptureInfo(s, ctypes.byref(info), None, None, None, None),
         "cudaStreamGetCaptureInfo")
rt.check(rt.lib.cudaStreamEndCapture(s, ctypes.byref(graph)), "cudaStreamEndCapture")
rt.check(rt.lib.cudaGraphInstantiate(ctypes.byref(exec_), graph, ctypes.c_ulonglong(0)),
         "cudaGraphInstantiate")
for _ in range(3):
    rt.check(rt.lib.cudaGraphLaunch(exec_, s), "cudaGraphLaunch")
rt.check(rt.lib.cudaStreamSynchronize(s), "cudaStreamSynchronize")
