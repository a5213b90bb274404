"""capguard's Python start-up module (python/capguard_python_startup/sitecustomize.py), on the
CPU: under libcapguard.so preloaded and CAPGUARD_TRACE_DIR set, importing CuPy installs the
"capguard" memory hook; the folder leaves sys.path again; the sitecustomize it shadows still
runs; CuPy's loader stays CuPy's; with the hooks off, or without the library, nothing is
installed and nothing breaks. A stand-in `cupy` package gives the hook API (cupy.cuda.memory_hook)
so that no GPU and no CuPy are needed.

usage: python_startup_test.py BUILD_DIR"""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

BUILD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else "build"
STARTUP = os.path.join(BUILD, "capguard_python_startup")
LIBRARY = os.path.join(BUILD, "libcapguard.so")

FAKE_MEMORY_HOOK = '''
hooks = {}
def get_memory_hooks():
    return hooks
class MemoryHook:
    name = "MemoryHook"
    def __enter__(self):
        if self.name in hooks:
            raise KeyError(self.name)
        hooks[self.name] = self
        return self
    def __exit__(self, *_):
        del hooks[self.name]
'''

PROBE = '''
import json, os, sys
import cupy
from cupy.cuda import memory_hook
hooks = memory_hook.get_memory_hooks()
hook = hooks.get("capguard")
if hook is not None:  # no graph holds memory: the hook must not call in
    hook.free_postprocess(device_id=0, mem_size=512, mem_ptr=0x7000, pmem_id=1)
    hook.malloc_postprocess(device_id=0, size=512, mem_size=512, mem_ptr=0x7000, pmem_id=1)
print(json.dumps({
    "hooks": sorted(hooks),
    "startup_on_path": any("capguard_python_startup" in p for p in sys.path),
    "chained": getattr(sys.modules.get("sitecustomize"), "CHAINED", False),
    "loader": type(cupy.__spec__.loader).__name__,
    "meta_path_clean": not any(type(f).__name__ == "_CupyImportWatcher" for f in sys.meta_path),
}))
'''


class PythonStartupTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        root = self.dir.name
        os.makedirs(os.path.join(root, "pkgs", "cupy", "cuda"))
        for path, text in {
            "pkgs/cupy/__init__.py": "from cupy import cuda\n",
            "pkgs/cupy/cuda/__init__.py": "",
            "pkgs/cupy/cuda/memory_hook.py": FAKE_MEMORY_HOOK,
            "other/sitecustomize.py": "CHAINED = True\n",
            "probe.py": PROBE,
        }.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as file:
                file.write(textwrap.dedent(text))
        os.makedirs(os.path.join(root, "traces"))

    def tearDown(self):
        self.dir.cleanup()

    def run_probe(self, preload=True, hooks=None):
        root = self.dir.name
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CAPGUARD_", "PYTHON"))}
        env["PYTHONPATH"] = os.pathsep.join(
            [STARTUP, os.path.join(root, "other"), os.path.join(root, "pkgs")])
        env["CAPGUARD_TRACE_DIR"] = os.path.join(root, "traces")
        if preload:
            env["LD_PRELOAD"] = LIBRARY
        if hooks is not None:
            env["CAPGUARD_FRAMEWORK_HOOKS"] = hooks
        done = subprocess.run([sys.executable, os.path.join(root, "probe.py")], env=env,
                              capture_output=True, text=True, timeout=60, check=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stderr, "")
        import json
        return json.loads(done.stdout.strip().splitlines()[-1])

    def check_as_without_capguard(self, seen):
        self.assertFalse(seen["startup_on_path"], "the start-up folder must leave sys.path")
        self.assertTrue(seen["chained"], "the shadowed sitecustomize must still run")
        self.assertEqual(seen["loader"], "SourceFileLoader", "CuPy's loader must stay CuPy's")
        self.assertTrue(seen["meta_path_clean"], "the import watcher leaves once CuPy is found")

    def test_importing_cupy_installs_the_hook(self):
        seen = self.run_probe()
        self.assertEqual(seen["hooks"], ["capguard"])
        self.check_as_without_capguard(seen)

    def test_hooks_off_install_nothing(self):
        seen = self.run_probe(hooks="0")
        self.assertEqual(seen["hooks"], [])
        self.assertTrue(seen["chained"])
        self.assertFalse(seen["startup_on_path"])

    def test_without_the_library_nothing_is_installed(self):
        seen = self.run_probe(preload=False)
        self.assertEqual(seen["hooks"], [])
        self.check_as_without_capguard(seen)


if __name__ == "__main__":
    unittest.main()
