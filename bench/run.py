#!/usr/bin/env python3
"""Runs capguard's benchmarks in one go on the GPU machine, alternating native runs and runs
under `capguard run`, and prints medians and ratios against the targets (docs/performance.md).

    bench/run.py --build build [--rounds 7] [--json OUT.json]

Each benchmark binary prints `metric <name> <value> <unit>`; the ratio is capguard/native of
that in-process measurement (startup and analysis after exit are reported separately as the
whole run's wall time). The analyzer throughput benchmark runs once, without a GPU.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

GPU_BENCHMARKS = [
    # binary, args, target ratio
    ("bench_eager_launch", ["200000"], 1.05),
    ("bench_capture_kernels", ["1000", "50"], 2.0),
    ("bench_graph_replay", ["20000"], 1.02),
    ("bench_multithread_capture", ["8", "500", "20"], None),
]


def parse_metric(output):
    for line in output.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == "metric":
            return parts[1], float(parts[2]), parts[3]
    raise RuntimeError("no metric line in output:\n" + output)


def run_once(cmd):
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    return parse_metric(proc.stdout), wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json")
    ap.add_argument("--analyzer-events", default="5000000")
    ap.add_argument("--analyzer-memory-steps", type=int, default=2_500_000,
                    help="captures in bench/analyzer_memory.py's trace (0: skip it)")
    ap.add_argument("--only", help="run only this GPU benchmark binary (and skip the analyzer)")
    args = ap.parse_args()
    capguard = os.path.join(args.build, "capguard")
    results = []

    for binary, bench_args, target in GPU_BENCHMARKS:
        if args.only and binary != args.only:
            continue
        exe = os.path.join(args.build, "bench", binary)
        native, guarded, native_wall, guarded_wall = [], [], [], []
        unit = name = ""
        for r in range(args.rounds):
            with tempfile.TemporaryDirectory() as trace_dir:
                plain = [exe] + bench_args
                under = [capguard, "run", "--trace-dir", trace_dir, "--", exe] + bench_args
                order = [(plain, native, native_wall), (under, guarded, guarded_wall)]
                if r % 2:
                    order.reverse()  # alternate which goes first, so drift hits both alike
                for cmd, sink, wall_sink in order:
                    (name, value, unit), wall = run_once(cmd)
                    sink.append(value)
                    wall_sink.append(wall)
        n, g = statistics.median(native), statistics.median(guarded)
        results.append({"benchmark": name, "unit": unit, "native": n, "capguard": g,
                        "ratio": g / n, "target": target, "rounds": args.rounds,
                        "native_all": native, "capguard_all": guarded,
                        "wall_native_s": statistics.median(native_wall),
                        "wall_capguard_s": statistics.median(guarded_wall)})

    if args.only:
        for r in results:
            print(f"{r['benchmark']} {r['native']:.4g} -> {r['capguard']:.4g} {r['unit']} "
                  f"ratio {r['ratio']:.3f}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"gpu": results}, f, indent=2)
        return
    exe = os.path.join(args.build, "bench", "bench_analyzer_throughput")
    proc = subprocess.run([exe, args.analyzer_events], capture_output=True, text=True)
    analyzer = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == "metric":
            analyzer[parts[1]] = (float(parts[2]), parts[3])
    if proc.returncode != 0 or "analyzer_throughput" not in analyzer:
        print(proc.stdout + proc.stderr, file=sys.stderr)
        sys.exit(1)

    print(f"{'benchmark':28} {'unit':12} {'native':>10} {'capguard':>10} {'ratio':>7} {'target':>7}  met")
    for r in results:
        target = f"{r['target']:.2f}" if r["target"] else "-"
        met = "-" if not r["target"] else ("yes" if r["ratio"] <= r["target"] else "NO")
        print(f"{r['benchmark']:28} {r['unit']:12} {r['native']:10.4g} {r['capguard']:10.4g} "
              f"{r['ratio']:7.3f} {target:>7}  {met}")
    rate = analyzer["analyzer_throughput"][0]
    print(f"{'analyzer_throughput':28} {'Mevents/s':12} {rate:10.4g} {'':10} {'':7} {'>=5':>7}  "
          f"{'yes' if rate >= 5 else 'NO'}")
    print(f"analyzer peak RSS growth: {analyzer['analyzer_peak_rss_growth'][0]:.0f} KiB for "
          f"{analyzer['analyzer_events'][0]:.0f} events")
    if args.analyzer_memory_steps:
        # Peak RSS of capguard report on a long training-loop trace (bounded, not per capture).
        memory = os.path.join(os.path.dirname(os.path.abspath(__file__)), "analyzer_memory.py")
        subprocess.run([sys.executable, memory, "--build", args.build,
                        "--steps", str(args.analyzer_memory_steps)], check=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": results, "analyzer": analyzer}, f, indent=2)


if __name__ == "__main__":
    main()
