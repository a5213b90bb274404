#!/usr/bin/env python3
"""Compare the findings of a live GPU run (scripts/gpu_integration.sh's results folder) with the
recorded goldens, program by program: same rules, same messages once addresses, capture ids,
thread ids and timings are set aside. An interposer change that keeps every trace the rules read
the same keeps this at 0 differ.

    scripts/compare_live_to_goldens.py RESULTS_DIR [GOLDEN_DIR]
"""
import glob
import json
import os
import re
import sys


def shape(message):
    message = re.sub(r"0x[0-9a-f]+", "ADDR", message or "")
    message = re.sub(r"#\d+", "#N", message)
    message = re.sub(r"thread \d+", "thread T", message)
    return re.sub(r"\d+(\.\d+)? (us|ms|s)\b", "TIME", message)


def findings(path):
    with open(path, encoding="utf-8") as report:
        return sorted((f.get("rule"), shape(f.get("message"))) for f in json.load(report).get(
            "findings", []))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    live_dir = sys.argv[1]
    golden_dir = sys.argv[2] if len(sys.argv) == 3 else os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "testcases", "recorded",
        "golden")
    compared = differ = 0
    for golden in sorted(glob.glob(os.path.join(golden_dir, "*.json"))):
        live = os.path.join(live_dir, os.path.basename(golden))
        if not os.path.exists(live):
            continue
        compared += 1
        expected, found = findings(golden), findings(live)
        if expected != found:
            differ += 1
            print(f"== {os.path.basename(golden)}")
            for rule, message in sorted(set(expected) ^ set(found)):
                print(f"  {'golden' if (rule, message) in expected else 'live  '} {rule}: {message}")
    print(f"compare_live_to_goldens: {compared} programs compared, {differ} differ")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
