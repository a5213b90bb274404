#!/usr/bin/env python3
"""Takes the traces of programs that passed on the GPU machine into testcases/recorded/traces/,
where the test suite replays them (testcases_recorded_traces) and compares them with golden
reports (testcases_golden_reports). Run on the development machine, on the result folders the
GPU scripts wrote (check_expectations.py --out: results.json and traces/<program>/):

    scripts/import_recorded.py /tmp/capguard-libs/libs /tmp/capguard-libs/libtorch /tmp/capguard-multi
    python3 testcases/check_golden.py --capguard build/capguard --update   # goldens of the new ones

Only programs whose verdict was PASS are taken; a program already recorded is replaced.
--into DIR records elsewhere (testcases/recorded-cuda12/traces: the CUDA 12 builds);
--only REGEX takes the programs whose name matches.
"""
import re
import json
import os
import shutil
import sys

RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testcases", "recorded", "traces")


def main():
    args = sys.argv[1:]
    into, only = RECORDED, None
    while args and args[0] in ("--into", "--only") and len(args) > 1:
        if args[0] == "--into":
            into = args[1]
        else:
            only = re.compile(args[1])
        args = args[2:]
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    taken = 0
    for results_dir in args:
        with open(os.path.join(results_dir, "results.json"), encoding="utf-8") as file:
            results = json.load(file)
        for result in results:
            program = result["program"]
            if only is not None and not only.search(program):
                continue
            source = os.path.join(results_dir, "traces", program)
            if result.get("verdict") != "PASS" or not os.path.isdir(source):
                print(f"skipped {program}: {result.get('verdict')}")
                continue
            target = os.path.join(into, program)
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target)
            taken += 1
            print(f"recorded {program}")
    print(f"{taken} programs recorded under {os.path.normpath(into)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
