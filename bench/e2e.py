#!/usr/bin/env python3
"""The cost of one `capguard run` as a user feels it: whole programs, native and under
capguard, alternating, with the extra time split into start-up and recording (inside the
program) and analysis after exit. Run on the GPU machine:

    bench/e2e.py --capguard build/capguard [--rounds 5] [--samples .samples] [--json OUT.json]

Each program first runs once natively and once under capguard, untimed, so that every timed run
finds the caches a user's second run finds (torch.compile's Inductor and Triton caches, JAX's
and CUDA's kernel caches, capguard's symbol cache): a cold compile in one round and not the next
moved a whole run by seconds. For each round: the program natively (wall) and `capguard run
--trace-dir DIR` (wall), each first in turn (so that a drift of the machine does not always
count against one side), then `capguard report DIR` alone (wall: the analysis `run` does after
the program exits, measured again on the same traces; with the symbol cache warm after the run,
so it is the second run's after-exit cost). In-program + start-up = run - report - native.
Medians and spread (min-max).
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = os.path.join(ROOT, "testcases", "python")

# name, command, working directory: the program kinds of the issue.
PYTHON_PROGRAMS = [
    ("PyTorch training step", ["python3", "torch_training_step_ok.py"], PY),
    ("torch.compile reduce-overhead", ["python3", "torch_compile_reduce_overhead_ok.py"], PY),
    ("make_graphed_callables", ["python3", "torch_make_graphed_callables_ok.py"], PY),
    ("JAX jit loop", ["python3", "jax_jit_loop_ok.py"], PY),
    ("CuPy capture", ["python3", "cupy_capture_ok.py"], PY),
]
# name, sources under Samples/, link flags, arguments
SAMPLES = [
    ("simpleCudaGraphs", ["3_CUDA_Features/simpleCudaGraphs/simpleCudaGraphs.cu"], [], []),
    ("conjugateGradientCudaGraphs",
     ["4_CUDA_Libraries/conjugateGradientCudaGraphs/conjugateGradientCudaGraphs.cu"],
     ["-lcublas", "-lcusparse"], []),
    ("jacobiCudaGraphs",
     ["3_CUDA_Features/jacobiCudaGraphs/jacobi.cu", "3_CUDA_Features/jacobiCudaGraphs/main.cpp"],
     [], []),
]


def timed(command, cwd, env=None):
    start = time.monotonic()
    result = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    return time.monotonic() - start, result.returncode


def build_samples(samples_dir, out_dir):
    programs = []
    for name, sources, libs, args in SAMPLES:
        binary = os.path.join(out_dir, name)
        command = ["nvcc", "-O2", "-arch=sm_90", "-I" + os.path.join(samples_dir, "Common"), "-o",
                   binary] + [os.path.join(samples_dir, "Samples", s) for s in sources] + libs
        if subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
            print(f"{name}: cannot build, left out", file=sys.stderr)
            continue
        programs.append((name, [binary] + args, out_dir))
    return programs


def spread(values):
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capguard", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--samples", help="a cuda-samples checkout (Common/, Samples/)")
    parser.add_argument("--only", help="substrings of the program names to run, comma-separated")
    parser.add_argument("--json")
    args = parser.parse_args()
    capguard = os.path.abspath(args.capguard)
    work = tempfile.mkdtemp(prefix="capguard-e2e-")
    programs = list(PYTHON_PROGRAMS)
    if args.samples:
        programs += build_samples(os.path.abspath(args.samples), work)
    if args.only:
        wanted = args.only.split(",")
        programs = [p for p in programs if any(w in p[0] for w in wanted)]
    rows = []
    print(f"{'program':30} | {'native s':>18} | {'capguard run s':>18} | {'run - native s':>18} "
          f"| {'in-program+start-up s':>22} | {'after exit s':>18} | status")
    for name, command, cwd in programs:
        native, run, report, statuses = [], [], [], set()
        traces = os.path.join(work, "traces")
        sides = [("native", command),
                 ("capguard", [capguard, "run", "--trace-dir", traces, "--"] + command)]
        for _, argv in sides:  # warm-up: the caches of a user's second run
            timed(argv, cwd)
        for round_index in range(args.rounds):
            shutil.rmtree(traces, ignore_errors=True)
            in_turn = sides if round_index % 2 == 0 else sides[::-1]
            took = {side: timed(argv, cwd) for side, argv in in_turn}
            t, native_status = took["native"]
            native.append(t)
            t, run_status = took["capguard"]
            run.append(t)
            t, _ = timed([capguard, "report", "-q", "-o", "json:" + os.devnull, traces], cwd)
            report.append(t)
            statuses.add((native_status, run_status))
        inside = [r - a - n for r, a, n in zip(run, report, native)]
        extra = [r - n for r, n in zip(run, native)]  # each round's pair, run back to back
        row = {"program": name, "native_s": native, "run_s": run, "report_s": report,
               "extra_s": extra, "inside_extra_s": inside,
               "exit_status_native_capguard": sorted(statuses)}
        rows.append(row)
        print(f"{name:30} | {spread(native):>18} | {spread(run):>18} | {spread(extra):>18} | "
              f"{spread(inside):>22} | {spread(report):>18} | {sorted(statuses)}", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"rounds": args.rounds, "rows": rows}, out, indent=1)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
