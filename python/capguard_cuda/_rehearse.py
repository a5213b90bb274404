"""Capture rehearsal: mark a region for `capguard run --rehearse GLOB`.

    with capguard_cuda.rehearse("decode"):      # or @capguard_cuda.rehearse("decode") on a function
        step(batch)

opens an NVTX range named "decode" around the region; `capguard run --rehearse decode -- python
app.py` then judges every CUDA call in it as if the region were captured. Without capguard the
range is an ordinary NVTX range (what Nsight Systems shows), nearly free when no tool listens.

The range is opened with the first of these that is there, so that nothing needs installing:
PyTorch's torch.cuda.nvtx when the program has imported torch; the `nvtx` package; ctypes on
libnvToolsExt.so.1 (the NVTX library PyTorch's wheels and older CUDA toolkits ship); and last
torch.cuda.nvtx when torch is importable. With none of them the region is not marked, and a
warning says so once (capguard run then warns that no range matched)."""

import contextlib
import ctypes
import ctypes.util
import importlib.util
import sys
import warnings

__all__ = ["rehearse"]

_backend = None  # (push(name), pop()), chosen at the first use


def _torch_backend():
    nvtx = sys.modules["torch"].cuda.nvtx
    return nvtx.range_push, nvtx.range_pop


def _nvtx_module_backend():
    import nvtx  # the `nvtx` package (NVIDIA's Python bindings)

    return (lambda name: nvtx.push_range(name)), (lambda: nvtx.pop_range())


def _ctypes_backend():
    for name in ("libnvToolsExt.so.1", ctypes.util.find_library("nvToolsExt")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        lib.nvtxRangePushA.argtypes = [ctypes.c_char_p]
        lib.nvtxRangePushA.restype = ctypes.c_int
        lib.nvtxRangePop.restype = ctypes.c_int
        return (lambda n: lib.nvtxRangePushA(n.encode())), lib.nvtxRangePop
    raise OSError("libnvToolsExt.so.1 not found")


def _importable_torch_backend():
    if importlib.util.find_spec("torch") is None:
        raise ImportError("torch is not installed")
    import torch  # noqa: F401  (imported for its NVTX bindings)

    return _torch_backend()


def _choose():
    attempts = []
    if "torch" in sys.modules:
        attempts.append(_torch_backend)
    attempts += [_nvtx_module_backend, _ctypes_backend, _importable_torch_backend]
    for attempt in attempts:
        try:
            return attempt()
        except Exception:  # any missing piece: try the next way
            continue
    warnings.warn(
        "capguard_cuda.rehearse: no NVTX library found (torch, the nvtx package or "
        "libnvToolsExt.so.1): regions are not marked",
        RuntimeWarning,
        stacklevel=3,
    )
    return (lambda name: None), (lambda: None)


class rehearse(contextlib.ContextDecorator):
    """An NVTX range named `name` around a `with` block or each call of a decorated function."""

    def __init__(self, name):
        self.name = str(name)

    def __enter__(self):
        global _backend
        if _backend is None:
            _backend = _choose()
        _backend[0](self.name)
        return self

    def __exit__(self, *exc):
        _backend[1]()
        return False
