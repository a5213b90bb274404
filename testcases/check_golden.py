#!/usr/bin/env python3
"""Replays the traces recorded on the GPU machine (testcases/recorded/traces/<program>/) through
`capguard report` and compares the text and JSON reports with the golden files beside them
(testcases/recorded/golden/<program>.txt, .json). On a difference it prints a unified diff.

    check_golden.py --capguard build/capguard [--recorded testcases/recorded]
                    [--update [RULE|PROGRAM ...]]

--update rewrites golden files from the current capguard (review the diff before committing):
with names, only those: a PROGRAM (a directory of recorded/traces/, e.g. sync_during_capture_ok)
or a RULE id (every program whose current or golden report names that rule, e.g.
sync-during-capture); without names, every one. The rest are still checked.

Each report is made three times and must match each time: without the symbol cache, then with
a fresh one (filled as it goes), then again from what it holds (a cache hit must give
the bytes a miss gives).
"""
import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile


def report(capguard, traces, fmt, symbol_cache="off"):
    # --no-source: the recorded frames name files on the GPU machine; whether those happen to be
    # readable here must not change the golden text. Run beside the traces and named relative to
    # it: a report that names a trace (a missing end record) then reads the same in any checkout.
    proc = subprocess.run([os.path.abspath(capguard), "report", "--fail-on", "never", "--format",
                           fmt, "-o", "-", "-q", "--no-source", "--symbol-cache",
                           os.path.abspath(symbol_cache) if symbol_cache != "off" else "off",
                           os.path.basename(traces)],
                          capture_output=True, text=True, cwd=os.path.dirname(traces))
    if proc.returncode != 0:
        raise RuntimeError(f"capguard report {traces} exited {proc.returncode}: {proc.stderr}")
    return proc.stdout


RULE_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)+$")


def names_rule(names, golden_root, program, current_json):
    """Whether a rule id among `names` is in the program's current or golden JSON report."""
    golden = os.path.join(golden_root, f"{program}.json")
    reports = [current_json] + ([open(golden).read()] if os.path.exists(golden) else [])
    for text in reports:
        try:
            rules = {f["rule"] for f in json.loads(text).get("findings", [])}
        except ValueError:
            continue
        if rules & set(names):
            return True
    return False


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--capguard", required=True)
    ap.add_argument("--recorded", default=os.path.join(here, "recorded"))
    ap.add_argument("--update", nargs="*", metavar="RULE|PROGRAM",
                    help="rewrite these goldens (none named: every one)")
    args = ap.parse_args()
    traces_root = os.path.join(args.recorded, "traces")
    golden_root = os.path.join(args.recorded, "golden")
    os.makedirs(golden_root, exist_ok=True)
    programs = sorted(os.listdir(traces_root))
    if not programs:
        print(f"no recorded traces under {traces_root}", file=sys.stderr)
        return 1
    unknown = [n for n in args.update or [] if n not in programs and not RULE_ID.match(n)]
    if unknown:
        print(f"--update: not a program of {traces_root} nor a rule id: {' '.join(unknown)}",
              file=sys.stderr)
        return 2
    failed = 0
    cache = tempfile.TemporaryDirectory(prefix="capguard-golden-cache-")
    for program in programs:
        update = args.update is not None and (
            not args.update or program in args.update or
            names_rule(args.update, golden_root, program,
                       report(args.capguard, os.path.join(traces_root, program), "json")))
        passes = ["off"] if update else ["off", cache.name, cache.name]
        for fmt, ext in (("text", "txt"), ("json", "json")):
            golden = os.path.join(golden_root, f"{program}.{ext}")
            expected = open(golden).read() if os.path.exists(golden) else ""
            for setting in passes:
                actual = report(args.capguard, os.path.join(traces_root, program), fmt, setting)
                if update:
                    with open(golden, "w") as f:
                        f.write(actual)
                    continue
                if actual != expected:
                    failed += 1
                    name = "capguard report" + ("" if setting == "off" else " (symbol cache)")
                    sys.stdout.writelines(difflib.unified_diff(
                        expected.splitlines(True), actual.splitlines(True), golden, name))
                    break
    checked = len(programs) * 2
    print(f"{checked - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
