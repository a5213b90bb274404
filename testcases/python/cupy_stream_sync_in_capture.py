"""CuPy: waiting for the capturing stream inside Stream.begin_capture / end_capture. CUDA
refuses the synchronize (900) and invalidates the capture; CuPy raises at the synchronize, and
end_capture fails afterwards."""
import cupy as cp

x = cp.zeros(16, dtype=cp.float32)
s = cp.cuda.Stream(non_blocking=True)
with s:
    s.begin_capture()
    x += 1
    try:
        s.synchronize()  # expect: sync-during-capture
    except cp.cuda.runtime.CUDARuntimeError as exc:
        print("synchronize:", exc)
    try:
        s.end_capture()
    except cp.cuda.runtime.CUDARuntimeError as exc:
        print("end_capture:", exc)
