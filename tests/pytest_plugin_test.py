#!/usr/bin/env python3
"""The pytest plugin (python/capguard/pytest_plugin.py) writes one begin and one end mark per
test to $CAPGUARD_TRACE_DIR/capguard.<pid>.tests, on the monotonic clock, and says when
capguard is not attached. Skipped (exit 77, with the reason) where pytest is not installed."""

import os
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


def run_pytest(directory, env_extra, *args):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), **env_extra)
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "capguard.pytest_plugin", "-p", "no:cacheprovider",
         *args, os.path.join(directory, "test_sample.py")],
        cwd=directory, env=env, capture_output=True, text=True, timeout=120)


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
    for failure in failures:
        print("FAIL:", failure)
    print("pytest_plugin_test:", "FAILED" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
