#!/usr/bin/env python3
"""scripts/check_pytest_junit.py (the JUnit check of scripts/gpu_pytest_check.sh) without a GPU:
the recorded trace of testcases/python/torch_item_in_capture.py plus a hand-written
capguard.<pid>.tests (the pytest plugin's marks) through `capguard report --format junit`. The
checker must pass when the marks put the .item() call in test_item_in_capture, and fail when
they put it in test_clean_capture, when the clean test's case carries a failure as well (edited
by hand), when there are no marks, and on a file that is no XML.

  check_pytest_junit_test.py CAPGUARD SOURCE_DIR"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

FAILING, RULE, CLEAN = "test_item_in_capture", "sync-during-capture", "test_clean_capture"
PREFIX = "test_capture_pair.py::"


def trace_times(trace):
    """(first event time, the cudaStreamBeginCapture's time, last event time), in ns."""
    times, begin = [], None
    with open(trace, encoding="utf-8") as f:
        for line in f:
            fields = line.split()
            if fields[:1] == ["e"]:
                times.append(int(fields[2], 16))
                if fields[4] == "cudaStreamBeginCapture" and begin is None:
                    begin = times[-1]
    return times[0], begin, times[-1]


def main(capguard, source):
    recorded = os.path.join(source, "testcases", "recorded", "traces", "torch_item_in_capture")
    trace = next(name for name in os.listdir(recorded) if name.endswith(".trace"))
    pid = int(re.match(r"capguard\.(\d+)\.trace$", trace).group(1))
    first, begin, last = trace_times(os.path.join(recorded, trace))
    checker = os.path.join(source, "scripts", "check_pytest_junit.py")
    failures = []
    with tempfile.TemporaryDirectory() as work:
        def junit(name, marks):
            """The JUnit report of the recorded trace with these (test, begin, end) marks."""
            directory = os.path.join(work, name)
            shutil.copytree(recorded, directory)
            if marks:
                with open(os.path.join(directory, "capguard.%d.tests" % pid), "w") as f:
                    for test, start, end in marks:
                        f.write("capguard-test-begin %d %d %s%s\n" % (start, pid, PREFIX, test))
                        f.write("capguard-test-end %d %d %s%s\n" % (end, pid, PREFIX, test))
            out = os.path.join(work, name + ".junit.xml")
            subprocess.run([capguard, "report", "--fail-on", "never", "--format", "junit", "-o",
                            out, "-q", directory], check=True, timeout=120)
            return out

        def expect(status, path, what):
            result = subprocess.run([sys.executable, checker, path, FAILING, RULE, CLEAN],
                                    capture_output=True, text=True, timeout=60)
            if result.returncode != status:
                failures.append("%s: exit %d, expected %d:\n%s" % (what, result.returncode, status,
                                                                    result.stdout))

        right = [(CLEAN, first - 1000, begin - 1), (FAILING, begin - 1, last + 1000)]
        swapped = [(FAILING, first - 1000, begin - 1), (CLEAN, begin - 1, last + 1000)]
        expect(0, junit("right", right), "the finding in test_item_in_capture")
        # Both cases failing: the clean one given a failure of its own by hand.
        with open(os.path.join(work, "right.junit.xml")) as f:
            text = f.read()
        clean_case = '<testcase classname="capguard.python3" name="%s%s"/>' % (PREFIX, CLEAN)
        if clean_case not in text:
            failures.append("the clean test's case is not an empty element:\n" + text)
        both = os.path.join(work, "both.junit.xml")
        with open(both, "w") as f:
            f.write(text.replace(clean_case, clean_case[:-2] + '><failure message="x: y" type="x">'
                                 'z</failure></testcase>'))
        expect(1, both, "a finding in test_clean_capture as well")
        expect(1, junit("swapped", swapped), "the finding in test_clean_capture")
        expect(1, junit("unmarked", []), "no marks (no test cases)")
        bad = os.path.join(work, "bad.xml")
        with open(bad, "w") as f:
            f.write("not xml")
        expect(1, bad, "no XML")
        result = subprocess.run([sys.executable, checker], capture_output=True, timeout=60)
        if result.returncode != 2:
            failures.append("no arguments: exit %d, expected 2" % result.returncode)
    for failure in failures:
        print("FAIL:", failure)
    print("check_pytest_junit_test:", "FAILED" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
