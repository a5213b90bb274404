#!/usr/bin/env python3
"""Runs capguard's benchmarks in one go on the GPU machine, alternating native runs and runs
under `capguard run`, and prints medians and ratios against the targets (docs/performance.md).

    bench/run.py --build build [--before OLD_BUILD] [--variant NAME:VAR=VALUE,...] [--rounds 7]
                 [--only BINARY [--args ...]] [--json OUT.json]

Each benchmark binary prints `metric <name> <value> <unit>`; the ratio is capguard/native of
that in-process measurement (startup and analysis after exit are reported separately as the
whole run's wall time). Every round runs native and each capguard build once, in an order that
rotates from round to round, so that the GPU machine's drift and its bimodal rounds hit every
mode alike; the verdict is the median of the per-round ratios (a round's modes ran within
seconds of each other), with their range. `--before` adds a second capguard build (a directory
with `capguard` and `libcapguard.so`) measured in the same rounds: a change's before and after.
`--variant` adds the current build run with some environment (a knob's settings side by side):
    bench/run.py --build B --only bench_graph_replay --args 20000 --rounds 7 \
        --variant w50:CAPGUARD_DETACH_IDLE_MS=50 --variant off:CAPGUARD_DETACH_IDLE_MS=off

The analyzer throughput benchmark runs without a GPU, `--analyzer-runs` times on one CPU (the
target's condition) and unpinned (where helper threads cut a large trace into lines and
parse its events ahead of the analysis, trace/parse_ahead.h),
interleaved (`--analyzer-cpus`), median and range of each.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

GPU_BENCHMARKS = [
    # binary, args, target ratio: the goals of taking launches off CUPTI (ARCHITECTURE.md),
    # looser than the targets docs/performance.md holds now
    ("bench_eager_launch", ["200000"], 1.02),
    ("bench_capture_kernels", ["1000", "50"], 1.5),
    ("bench_graph_replay", ["20000"], 1.02),
    ("bench_multithread_capture", ["8", "500", "20"], None),
]
ANALYZER_TARGET = 20.0  # Mevents/s on one core


def parse_metric(output):
    for line in output.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == "metric":
            return parts[1], float(parts[2]), parts[3]
    raise RuntimeError("no metric line in output:\n" + output)


def run_once(cmd, env=None):
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          env=dict(os.environ, **env) if env else None)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    return parse_metric(proc.stdout), wall


def spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def run_benchmark(binary, bench_args, target, builds, rounds):
    """builds: [(mode name, capguard path or None for native, its folder, environment)], native
    first; every mode runs the programs of the last one (the current build)."""
    exe = os.path.join(builds[-1][2], "bench", binary)
    values = {mode: [] for mode, *_ in builds}
    walls = {mode: [] for mode, *_ in builds}
    unit = name = ""
    for r in range(rounds):
        with tempfile.TemporaryDirectory() as trace_dir:
            order = builds[r % len(builds):] + builds[:r % len(builds)]
            for mode, capguard, _, env in order:
                cmd = [exe] + bench_args
                if capguard:
                    cmd = [capguard, "run", "--trace-dir", trace_dir, "--"] + cmd
                (name, value, unit), wall = run_once(cmd, env)
                values[mode].append(value)
                walls[mode].append(wall)
    result = {"benchmark": name, "unit": unit, "target": target, "rounds": rounds, "modes": {}}
    native = values["native"]
    for mode, *_ in builds:
        entry = {"all": values[mode], **spread(values[mode]),
                 "wall_s": statistics.median(walls[mode])}
        if mode != "native":
            entry["ratio_of_medians"] = entry["median"] / statistics.median(native)
            entry["round_ratios"] = [v / n for v, n in zip(values[mode], native)]
            entry["ratio"] = spread(entry["round_ratios"])
        result["modes"][mode] = entry
    return result


def print_benchmark(result, short):
    for mode, entry in result["modes"].items():
        if mode == "native":
            continue
        ratio = entry["ratio"]
        if short:  # the line scripts/gpu_bench_compare.sh and gpu_cuda12.sh keep
            label = result["benchmark"] + ("" if mode == "capguard" else f" [{mode}]")
            print(f"{label} {result['modes']['native']['median']:.4g} -> "
                  f"{entry['median']:.4g} {result['unit']} ratio {ratio['median']:.3f}")
            continue
        target = result["target"]
        met = "-" if not target else ("yes" if ratio["median"] <= target else "NO")
        print(f"{result['benchmark']:26} {mode:8} {result['unit']:11} "
              f"{result['modes']['native']['median']:9.4g} {entry['median']:9.4g} "
              f"{ratio['median']:7.3f} ({ratio['min']:.3f}-{ratio['max']:.3f}) "
              f"{entry['ratio_of_medians']:7.3f} {target or '-':>6}  {met}")


def run_analyzer(build, events, runs, placements):
    """Each placement (a taskset CPU list, or 'all' for unpinned) `runs` times, interleaved."""
    exe = os.path.join(build, "bench", "bench_analyzer_throughput")
    can_pin = shutil.which("taskset") is not None
    rates = {place: [] for place in placements}
    metrics = {}
    for _ in range(runs):
        for place in placements:
            pin = ["taskset", "-c", place] if place != "all" and can_pin else []
            proc = subprocess.run(pin + [exe, events], capture_output=True, text=True)
            for line in proc.stdout.splitlines():
                parts = line.split()
                if len(parts) == 4 and parts[0] == "metric":
                    metrics[parts[1]] = (float(parts[2]), parts[3])
            if proc.returncode != 0 or "analyzer_throughput" not in metrics:
                print(proc.stdout + proc.stderr, file=sys.stderr)
                sys.exit(1)
            rates[place].append(metrics["analyzer_throughput"][0])
    return {"placements": [{"cpus": place if can_pin else "all", "rates": rates[place],
                            **spread(rates[place])} for place in placements],
            "peak_rss_growth_kib": metrics["analyzer_peak_rss_growth"][0],
            "events": metrics["analyzer_events"][0]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--before", help="a second capguard build measured in the same rounds")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json")
    ap.add_argument("--analyzer-events", default="5000000")
    ap.add_argument("--analyzer-runs", type=int, default=5)
    ap.add_argument("--analyzer-cpus", default="2 all",
                    help="placements, space-separated: a taskset CPU list, or 'all' (unpinned); "
                         "the first is the verdict's (one core)")
    ap.add_argument("--analyzer-memory-steps", type=int, default=2_500_000,
                    help="captures in bench/analyzer_memory.py's trace (0: skip it)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:VAR=VALUE,...",
                    help="the current build again, run with this environment (repeatable)")
    ap.add_argument("--only", help="run only this GPU benchmark binary (and skip the analyzer)")
    ap.add_argument("--args", nargs="+", help="with --only: the benchmark's arguments instead")
    args = ap.parse_args()
    capguard = os.path.join(args.build, "capguard")
    builds = [("native", None, args.build, None)]
    if args.before:
        builds.append(("before", os.path.join(args.before, "capguard"), args.before, None))
    for variant in args.variant:
        name, _, settings = variant.partition(":")
        env = dict(setting.split("=", 1) for setting in settings.split(",") if "=" in setting)
        builds.append((name, capguard, args.build, env))
    builds.append(("capguard", capguard, args.build, None))

    results = [run_benchmark(binary, args.args if args.only and args.args else bench_args,
                             target, builds, args.rounds)
               for binary, bench_args, target in GPU_BENCHMARKS
               if not args.only or binary == args.only]
    if args.only:
        for result in results:
            print_benchmark(result, short=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"gpu": results}, f, indent=2)
        return

    print(f"{args.rounds} rounds; ratio: median of the per-round ratios (range), then the "
          "ratio of the medians")
    print(f"{'benchmark':26} {'build':8} {'unit':11} {'native':>9} {'capguard':>9} "
          f"{'ratio':>7} {'(range)':15} {'of med.':>7} {'target':>6}  met")
    for result in results:
        print_benchmark(result, short=False)
    analyzer = run_analyzer(args.build, args.analyzer_events, args.analyzer_runs,
                            args.analyzer_cpus.split())
    for i, placed in enumerate(analyzer["placements"]):
        where = "unpinned" if placed["cpus"] == "all" else f"CPU {placed['cpus']}"
        verdict = f">={ANALYZER_TARGET:g}  " + (
            "yes" if placed["median"] >= ANALYZER_TARGET else "NO") if i == 0 else ""
        print(f"{'analyzer_throughput':26} {'':8} {'Mevents/s':11} {placed['median']:9.4g} "
              f"({placed['min']:.4g}-{placed['max']:.4g}, {args.analyzer_runs} runs, {where}) "
              f"{verdict}")
    print(f"analyzer peak RSS growth: {analyzer['peak_rss_growth_kib']:.0f} KiB for "
          f"{analyzer['events']:.0f} events")
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
