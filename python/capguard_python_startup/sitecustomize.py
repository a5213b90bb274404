"""capguard's Python start-up module: `capguard run` puts this folder first on PYTHONPATH.

It gives CuPy's memory pool a cupy.cuda.MemoryHook (CuPy's public hook API) once CuPy is
imported, so that capguard sees an array's memory go back to the pool, or to the next array,
while a live CUDA graph still holds it: the pool never calls CUDA for either. The hook asks
libcapguard.so about a chunk only while some graph exec holds memory, and capguard records it
only when that exec holds an address in the chunk.

Everything else stays as without capguard: this folder leaves sys.path again, the next
sitecustomize on the path (a distribution's, a virtual environment's) is imported in its
place, and nothing here raises into the program. CuPy's hooks are per thread: the thread that
imports CuPy (usually the main thread) is the one seen.
"""

import os
import sys

# What the pool did, as libcapguard.so's capguard_cupy_pool_event numbers it
# (interposer/python_pool_exports.cpp).
_POOL_MALLOC = 1
_POOL_FREE = 2


def _capguard_library():
    """libcapguard.so's entry points, when the process has it preloaded and recording."""
    import ctypes

    try:
        library = ctypes.PyDLL(None)  # the GIL stays held: the recorder reads the Python stack
        attach = library.capguard_cupy_pool_attach
        event = library.capguard_cupy_pool_event
        held_flag = library.capguard_memory_held_flag
    except (OSError, AttributeError):
        return None
    attach.restype = ctypes.c_int32
    attach.argtypes = ()
    event.restype = None
    event.argtypes = (ctypes.c_int32, ctypes.c_uint64, ctypes.c_uint64)
    held_flag.restype = ctypes.c_void_p
    held_flag.argtypes = ()
    held = ctypes.c_int32.from_address(held_flag())
    return attach, event, held


def _install_cupy_hook():
    found = _capguard_library()
    if found is None:
        return
    attach, event, held = found
    from cupy.cuda import memory_hook

    class CapguardMemoryHook(memory_hook.MemoryHook):
        """Tells capguard which pool chunks go back and out again while a graph holds memory."""

        name = "capguard"

        def malloc_postprocess(self, mem_ptr=0, mem_size=0, **_):
            if held.value and mem_ptr:
                event(_POOL_MALLOC, mem_ptr, mem_size)

        def free_postprocess(self, mem_ptr=0, mem_size=0, **_):
            if held.value and mem_ptr:
                event(_POOL_FREE, mem_ptr, mem_size)

    if attach() != 1:
        return
    CapguardMemoryHook().__enter__()


class _CupyImportWatcher:
    """A meta path finder that finds nothing itself: when `cupy` is imported, it lets the
    other finders find it and runs the hook's installation once the package has executed."""

    def find_spec(self, name, path=None, target=None):
        if name != "cupy":
            return None
        import importlib.util

        sys.meta_path.remove(self)  # once: the real finders find cupy
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader_exec = spec.loader.exec_module

        def exec_module(module):
            loader_exec(module)
            try:
                _install_cupy_hook()
            except Exception:  # never the program's problem: capguard then sees no pool frees
                pass

        # On this spec's own loader only (a loader per module): module.__loader__ stays CuPy's.
        spec.loader.exec_module = exec_module
        return spec


def _chain_next_sitecustomize():
    """Leaves sys.path as it would be and imports the sitecustomize this one shadows."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if not p or os.path.abspath(p) != here]
    this = sys.modules.pop("sitecustomize", None)
    try:
        import sitecustomize  # noqa: F401  (the next one on the path, if any)
    except ImportError as error:
        if error.name != "sitecustomize":
            raise
        if this is not None:
            sys.modules["sitecustomize"] = this


if os.environ.get("CAPGUARD_FRAMEWORK_HOOKS", "1") != "0":
    sys.meta_path.insert(0, _CupyImportWatcher())
_chain_next_sitecustomize()
