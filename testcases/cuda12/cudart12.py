"""The CUDA 12 runtime for the CUDA 12 Python testcases, through ctypes as a program
that drives libcudart itself does: CAPGUARD_CUDART12 names the library (scripts/gpu_cuda12.sh:
the 12.9 runtime laid out as PyPI's nvidia-cuda-runtime-cu12), else that package where it is
installed."""
import ctypes
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    if os.environ.get("CAPGUARD_CUDART12"):
        yield os.environ["CAPGUARD_CUDART12"]
    try:
        import nvidia.cuda_runtime  # noqa: PLC0415  (pip install nvidia-cuda-runtime-cu12)
        yield os.path.join(list(nvidia.cuda_runtime.__path__)[0], "lib", "libcudart.so.12")
    except ImportError:
        pass


def load():
    for path in _candidates():
        if os.path.exists(path):
            return Runtime(ctypes.CDLL(os.path.realpath(path), mode=ctypes.RTLD_GLOBAL))
    raise SystemExit("cudart12: no libcudart.so.12 (set CAPGUARD_CUDART12)")


class Runtime:
    """The few runtime calls the testcases make; each returns cudaError_t."""

    def __init__(self, lib):
        self.lib = lib
        version = ctypes.c_int()
        lib.cudaRuntimeGetVersion(ctypes.byref(version))
        self.version = version.value

    def malloc(self, size):
        pointer = ctypes.c_void_p()
        self.check(self.lib.cudaMalloc(ctypes.byref(pointer), ctypes.c_size_t(size)), "cudaMalloc")
        return pointer

    def stream(self):
        stream = ctypes.c_void_p()
        self.check(self.lib.cudaStreamCreateWithFlags(ctypes.byref(stream), 1), "cudaStreamCreate")
        return stream

    def check(self, error, what):
        if error != 0:
            name = self.lib.cudaGetErrorName
            name.restype = ctypes.c_char_p
            print(f"{what}: error {error} ({name(error).decode()})")
        return error
