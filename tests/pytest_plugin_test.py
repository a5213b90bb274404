#!/usr/bin/env python3
"""The pytest plugin (python/capguard_cuda/pytest_plugin.py) writes one begin and one end mark per
test to $CAPGUARD_TRACE_DIR/capguard.<pid>.tests, on the monotonic clock, and says when
capguard is not attached. Skipped (exit 77, with the reason) where pytest is not installed."""

import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP = 77

TESTS = """
def test_clean():
    pass

def test_failing():
    assert False
"""


def run_pytest(directory, env_extra, *args, plugin=True):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    env.update(env_extra)
    env.pop("PYTEST_ADDOPTS", None)
    load = ["-p", "capguard_cuda.pytest_plugin"] if plugin else []
    return subprocess.run(
        [sys.executable, "-m", "pytest", *load, "-p", "no:cacheprovider", *args,
         os.path.join(directory, "test_sample.py")],
        cwd=directory, env=env, capture_output=True, text=True, timeout=120)


def pytest11_entry_point():
    """(name, target) of pyproject.toml's pytest11 entry point."""
    text = open(os.path.join(ROOT, "pyproject.toml")).read()
    section = text.split("[project.entry-points.pytest11]", 1)[1].split("\n[", 1)[0]
    for line in section.splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            name, target = (part.strip().strip('"') for part in line.split("=", 1))
            return name, target
    raise SystemExit("pyproject.toml has no pytest11 entry point")


def main():
    try:
        import pytest  # noqa: F401
    except ImportError:
        print("SKIP: pytest is not installed (scripts/setup.sh installs python3-pytest)")
        return SKIP
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as work:
        with open(os.path.join(work, "test_sample.py"), "w") as f:
            f.write(TESTS)
        traces = os.path.join(work, "traces")
        os.mkdir(traces)
        before = time.monotonic_ns()
        result = run_pytest(work, {"CAPGUARD_TRACE_DIR": traces})
        after = time.monotonic_ns()
        check(result.returncode == 1, "pytest should fail one test: " + result.stdout)
        check("capguard: attached" in result.stdout, "no attached header: " + result.stdout)
        files = os.listdir(traces)
        check(len(files) == 1 and files[0].startswith("capguard.") and files[0].endswith(".tests"),
              "one capguard.<pid>.tests expected: %r" % files)
        lines = open(os.path.join(traces, files[0])).read().splitlines() if files else []
        pid = files[0].split(".")[1] if files else ""
        want = [("begin", "test_clean"), ("end", "test_clean"),
                ("begin", "test_failing"), ("end", "test_failing")]
        check(len(lines) == 4, "four marks expected: %r" % lines)
        times = []
        for line, (what, test) in zip(lines, want):
            parts = line.split(" ", 3)
            check(parts[0] == "capguard-test-" + what, "bad mark: " + line)
            check(parts[2] == pid, "pid not the file's: " + line)
            check(parts[3] == "test_sample.py::" + test, "bad node id: " + line)
            times.append(int(parts[1]))
        check(times == sorted(times) and all(before <= t <= after for t in times),
              "times not on this monotonic clock: %r" % times)

        result = run_pytest(work, {"CAPGUARD_TRACE_DIR": ""})
        check("capguard: not attached" in result.stdout, "no warning without capguard: " +
              result.stdout)

        # As installed: pyproject.toml's pytest11 entry point, in a dist-info on the path, loads
        # the plugin for --capguard, and -p beside it finds it loaded rather than a second copy.
        installed = os.path.join(work, "site")
        info = os.path.join(installed, "capguard_cuda-0.0.0.dist-info")
        os.makedirs(info)
        shutil.copytree(os.path.join(ROOT, "python", "capguard_cuda"),
                        os.path.join(installed, "capguard_cuda"))
        with open(os.path.join(info, "METADATA"), "w") as f:
            f.write("Metadata-Version: 2.1\nName: capguard-cuda\nVersion: 0.0.0\n")
        with open(os.path.join(info, "entry_points.txt"), "w") as f:
            f.write("[pytest11]\n%s = %s\n" % pytest11_entry_point())
        for args in (["--capguard"], ["-p", "capguard_cuda.pytest_plugin", "--capguard"]):
            result = run_pytest(work, {"CAPGUARD_TRACE_DIR": traces, "PYTHONPATH": installed},
                                *args, plugin=False)
            check(result.returncode == 1 and "capguard: attached" in result.stdout,
                  "installed, %s: %s%s" % (" ".join(args), result.stdout, result.stderr))
    for failure in failures:
        print("FAIL:", failure)
    print("pytest_plugin_test:", "FAILED" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
