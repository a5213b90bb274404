#!/usr/bin/env python3
"""What capture rehearsal costs, on the GPU machine: bench_eager_launch's loop inside an
NVTX range "bench", natively, under `capguard run` (the range not rehearsed: today's cost outside
rehearsed regions) and under `capguard run --rehearse bench` (every launch recorded and judged),
alternating, ROUNDS each; medians and spread of us/launch, and the ratios to native.

    bench/rehearse_cost.py --build DIR [--rounds 5] [--launches 100000]

DIR holds capguard, libcapguard.so and bench/bench_eager_launch (bench/run.py's layout)."""
import argparse
import os
import statistics
import subprocess
import tempfile


def metric(command, env):
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=False).stdout
    for line in out.splitlines():
        if line.startswith("metric eager_launch"):
            return float(line.split()[2])
    raise RuntimeError(f"no metric from {' '.join(command)}:\n{out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--launches", type=int, default=100000)
    args = parser.parse_args()
    capguard = os.path.join(args.build, "capguard")
    program = [os.path.join(args.build, "bench", "bench_eager_launch"), str(args.launches)]
    env = dict(os.environ, CAPGUARD_BENCH_RANGE="bench")
    sides = {
        "native": lambda: program,
        "capguard run (range not rehearsed)": lambda: [capguard, "run", "--"] + program,
        "capguard run --rehearse bench": lambda: [capguard, "run", "--rehearse", "bench",
                                                  "--fail-on", "never", "--"] + program,
    }
    times = {name: [] for name in sides}
    with tempfile.TemporaryDirectory():
        for _ in range(args.rounds):
            for name, command in sides.items():
                times[name].append(metric(command(), env))
    native = statistics.median(times["native"])
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:38} {median:7.3f} us/launch ({min(values):.3f}-{max(values):.3f}), "
              f"ratio {median / native:.3f}")


if __name__ == "__main__":
    main()
