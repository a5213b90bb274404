#!/usr/bin/env python3
"""Compares the findings of the testcase programs built with CUDA 12 with those of the same
programs built with CUDA 13: per program, the same rules at the same lines.

    compare_cuda_results.py CUDA13_RESULTS.json CUDA12_RESULTS.json [MORE_CUDA12_RESULTS.json ...]

Each file is the results.json that testcases/check_expectations.py --out writes. Prints one line
per program that differs and a count; exits 1 when any differs, 2 when a file is missing."""
import json
import sys


def findings(path):
    with open(path, encoding="utf-8") as file:
        return {row["program"]: sorted(map(tuple, row["found"] or [])) for row in json.load(file)}


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        reference = findings(sys.argv[1])
        others = [(path, findings(path)) for path in sys.argv[2:]]
    except OSError as error:
        print(f"compare_cuda_results: {error}", file=sys.stderr)
        return 2
    compared = differ = 0
    for path, runs in others:
        for program, found in sorted(runs.items()):
            if program not in reference:
                print(f"{path}: {program}: no CUDA 13 run to compare with")
                differ += 1
                continue
            compared += 1
            if found != reference[program]:
                differ += 1
                print(f"{path}: {program}: CUDA 12 {found} / CUDA 13 {reference[program]}")
    print(f"compare_cuda_results: {compared} programs compared, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
