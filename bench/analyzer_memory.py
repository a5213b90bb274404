#!/usr/bin/env python3
"""Peak memory and throughput of `capguard report` on a long training-loop trace (one clean
capture per step, 8 events each), for the text and the JSON report. Memory must not grow with
the number of clean captures; design.md's target is >= 5 million events/s on one core.

    bench/analyzer_memory.py --build build [--steps 2500000] [--dir /tmp/capguard-memory]

The trace (about 800 bytes a step: 2 GB for 2.5M steps) is generated once into --dir and kept
for later runs. capguard is pinned to one core (taskset) when taskset exists.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time


def measure(cmd):
    """Runs cmd; returns (exit status, wall seconds, CPU seconds, peak RSS in MiB)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    cpu = usage.ru_utime + usage.ru_stime
    return os.waitstatus_to_exitcode(status), wall, cpu, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--steps", type=int, default=2_500_000)
    ap.add_argument("--dir", default="/tmp/capguard-memory")
    args = ap.parse_args()
    trace_dir = os.path.join(args.dir, str(args.steps))
    trace = os.path.join(trace_dir, "capguard.4242.trace")
    events = args.steps * 8
    if not os.path.exists(trace):
        os.makedirs(trace_dir, exist_ok=True)
        generator = os.path.join(args.build, "bench", "bench_analyzer_memory_trace")
        subprocess.run([generator, str(args.steps), trace_dir], check=True, stdout=subprocess.DEVNULL)
    size_mb = os.path.getsize(trace) / 1e6
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    capguard = os.path.join(args.build, "capguard")
    print(f"trace: {args.steps} captures, {events} events, {size_mb:.0f} MB ({trace})")
    failed = False
    for fmt, outputs in (("text", []), ("json", ["-q", "-o", "json:/dev/null"]),
                         ("sarif", ["-q", "-o", "sarif:/dev/null"])):
        status, wall, cpu, rss = measure(pin + [capguard, "report", "--format", fmt] + outputs +
                                         [trace])
        failed |= status != 0
        print(f"metric analyzer_{fmt}_peak_rss {rss:.0f} MiB")
        # Per CPU second as well: on a shared machine the wall clock also counts waiting.
        print(f"metric analyzer_{fmt}_throughput {events / wall / 1e6:.2f} Mevents/s"
              f"  ({events / cpu / 1e6:.2f} per CPU second; exit {status}, {wall:.1f} s wall,"
              f" {cpu:.1f} s CPU)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
