#!/usr/bin/env python3
"""scripts/demo.sh from the recorded traces (DEMO_FROM_TRACES=1, as without a GPU) fits a screen:
at most 60 lines of at most 120 columns, five chosen cases each showing its finding and its fix:
line (the PyTorch one first, with the user's line as its first frame; the C++ one pointing at its
picture, a silent escape, a graph replaying freed memory), then one line about every recorded program, where the
HTML report is (written), and how to see any one in full.

  demo_test.py BUILD_DIR SOURCE_DIR      (BUILD_DIR holds capguard)"""

import os
import re
import subprocess
import sys
import tempfile

MAX_LINES = 60
MAX_COLUMNS = 120


def main(build, source):
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as work:
        html = os.path.join(work, "demo.html")
        env = dict(os.environ, BUILD_DIR=os.path.abspath(build), DEMO_FROM_TRACES="1",
                   DEMO_HTML=html, NO_COLOR="1")
        result = subprocess.run([os.path.join(source, "scripts", "demo.sh")], env=env,
                                capture_output=True, timeout=600)
        text = (result.stdout + result.stderr).decode("utf-8", "replace")
        lines = text.splitlines()
        check(result.returncode == 0, "demo.sh exit %d" % result.returncode)
        check(len(lines) <= MAX_LINES, "%d lines, over the %d-line budget" % (len(lines), MAX_LINES))
        for number, line in enumerate(lines, 1):
            check(len(line) <= MAX_COLUMNS, "line %d has %d columns: %s" % (number, len(line), line))

        cases = {}  # program -> its lines, heading included
        order = []
        current = None
        for line in lines:
            match = re.match(r"── (\w+): ", line)
            if match:
                current = cases.setdefault(match.group(1), [])
                order.append(match.group(1))
            elif not line:
                current = None
            if current is not None:
                current.append(line)
        check(len(cases) == 5, "five cases expected, found %s" % sorted(cases))

        def case(program, rule):
            body = cases.get(program, [])
            check(any(re.match(r"==\d+==(ERROR|WARNING): capguard: %s$" % rule, line)
                      for line in body), "%s: no %s finding shown: %r" % (program, rule, body))
            frames = [line for line in body if re.match(r" +#\d+ ", line)]
            check(bool(frames), "%s: no frame shown" % program)
            check(any(re.match(r"  fix: \S", line) for line in body), "%s: no fix: line" % program)
            return body, frames

        check(order[:1] == ["torch_item_in_capture"], "the demo does not open with PyTorch: %r" % order)
        body, _ = case("unjoined_fork", "unjoined-fork")
        check(bool(body) and "picture" in body[0], "unjoined_fork: its heading names no picture")
        _, frames = case("torch_item_in_capture", "sync-during-capture")
        check(bool(frames) and "torch_item_in_capture.py:" in frames[0],
              "torch_item_in_capture: the first frame is not the user's line: %r" % frames[:1])
        case("escaped_sync_copy", "escaped-sync-copy")
        case("graph_replay_after_free", "replay-after-free")
        case("torch_graph_rebuilt_every_step", "graph-rebuilt-every-step")

        recorded = os.path.join(source, "testcases", "recorded", "traces")
        count = sum(os.path.isdir(os.path.join(recorded, d)) for d in os.listdir(recorded))
        tail = lines[-3:]
        check(len(tail) == 3 and re.match(r"All %d recorded programs: \d+ errors?, " % count, tail[0]),
              "no one-line summary of all %d recorded programs: %r" % (count, tail[:1]))
        check(len(tail) == 3 and tail[1].endswith(html) and os.path.getsize(html) > 0
              if os.path.exists(html) else False, "the HTML report is not named or not written")
        check(len(tail) == 3 and re.match(r"Any one of them in full: \S*capguard report ", tail[2]),
              "no command to see one case in full: %r" % tail[2:])
    for failure in failures:
        print("FAIL:", failure)
    if failures:
        print("---- demo.sh printed:\n" + text)
    print("demo_test:", "FAILED" if failures else "ok (%d lines)" % len(lines))
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
