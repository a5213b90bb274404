#!/usr/bin/env python3
"""Prints each finding of capguard JSON reports with its user frame, the line capguard names as
the culprit: `  <report>: pid P: <severity> <rule> at <file>:<line> in <function> (frame #i of n,
k Python)`. Used by the GPU scripts after the checker's table.

    print_user_frames.py REPORT.json...     (results.json files are skipped)
"""
import json
import os
import sys


def main():
    for path in sys.argv[1:]:
        name = os.path.basename(path)[:-len(".json")]
        if name == "results":
            continue
        with open(path, encoding="utf-8") as file:
            report = json.load(file)
        findings = report.get("findings", [])
        print(f"-- {name}: {len(findings)} findings in {len(report.get('processes', []))} processes")
        for finding in findings:
            location = finding.get("location") or {}
            frames, index = location.get("frames") or [], location.get("user_frame", -1)
            user = frames[index] if isinstance(index, int) and 0 <= index < len(frames) else {}
            python = sum(1 for frame in frames if frame.get("module") == "python")
            print(f"   pid {finding.get('pid')}: {finding.get('severity')} {finding.get('rule')} at "
                  f"{user.get('file')}:{user.get('line')} in {user.get('function')} "
                  f"(frame #{index} of {len(frames)}, {python} Python)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
