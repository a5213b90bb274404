#!/usr/bin/env python3
"""Where `capguard run`'s start-up and recording time goes, on the GPU machine.

    bench/startup.py --capguard .gpu-bundle/capguard [--rounds 5] [--out /tmp/startup]
                     [--python /opt/torch/.venv/bin/python3] [--only cupy] [--no-cxx]
                     [--program NAME=COMMAND ...] [--no-empty-subscriber]

Each round runs every program natively and under `capguard run --trace-dir DIR` with
CAPGUARD_STARTUP_TIMES=1 (which of the two goes first alternates by round), and reads the
start-up tables that run leaves in DIR: `capguard-run.<pid>.startup` (capguard's own process) and
`capguard.<pid>.startup` (each process libcapguard.so was loaded into). All times there are
CLOCK_MONOTONIC, as is this script's time.monotonic(), so the launch of `capguard run` here is the
zero of each round's timeline. Where nvcc can build interposer/smoke/empty_subscriber.cpp, each
round also runs the program under that empty CUPTI subscriber (CUDA_INJECTION64_PATH: libcupti
loaded, runtime and driver domains on, a callback that does nothing): CUPTI's own floor. Prints the wall times (median, min-max) and, per program, the
median of each phase in milliseconds: the steps between consecutive points of the direct child's
and capguard's timeline, then the sums of durations (capguard's callbacks and the work inside
them). Everything measured goes to OUT/startup.json; the programs' output to OUT/logs/.

The default programs: testcases/python/{cupy_capture_ok,jax_jit_loop_ok,torch_training_step_ok}.py
and one C++ testcase (testcases/graph_rebuilt_every_step_ok.cu, built here with nvcc into OUT;
--cxx-source picks another, --cxx-binary uses a built one, --no-cxx leaves it out). Standard
library only.
"""
import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY_DIR = os.path.join(ROOT, "testcases", "python")
PYTHON_PROGRAMS = [
    ("cupy_capture_ok", "cupy_capture_ok.py"),
    ("jax_jit_loop_ok", "jax_jit_loop_ok.py"),
    ("torch_training_step_ok", "torch_training_step_ok.py"),
]
DEFAULT_CXX = os.path.join(ROOT, "testcases", "graph_rebuilt_every_step_ok.cu")

# The direct child's timeline (interposer/startup_times.h), after capguard's own points before
# the program (cli/run_command.cpp); each step is named after the point it ends at.
CHILD_POINTS = [
    "constructor", "constructor_done", "injection_entry", "init_begin", "driver_symbols",
    "trace_opened", "preamble_written", "cupti_loaded", "subscribed", "callbacks_enabled",
    "init_done", "first_callback", "first_record", "first_capture", "exit",
]
SUMS = ["callbacks", "module_scan", "stack_unwind", "python_frames", "graph_walk",
        "cupti_enable"]
WHAT = {
    "run_command": "capguard's exec, loading and option parsing",
    "fork": "capguard before the program (trace dir, environment)",
    "constructor": "exec of the program up to libcapguard's constructor",
    "constructor_done": "libcapguard's constructor",
    "injection_entry": "the program until cuInit calls capguard",
    "init_begin": "(from the previous point) until capguard attaches",
    "driver_symbols": "libcuda's entry points looked up",
    "trace_opened": "trace file created",
    "preamble_written": "command line and module map written",
    "cupti_loaded": "dlopen of libcupti",
    "subscribed": "cuptiSubscribe",
    "callbacks_enabled": "the gate's reduced set enabled",
    "init_done": "attach record written",
    "first_callback": "until the first CUPTI callback",
    "first_record": "until the first recorded call",
    "first_capture": "until the first BeginCapture",
    "exit": "the program until its exit handler",
    "child_exited": "exit handlers and teardown until capguard's waitpid returns",
    "traces_waited": "waiting for traced processes still running",
    "analysis_done": "analysis of the traces",
    "report_written": "writing the report",
    "end": "capguard's exit until this script sees it",
}


def read_table(path):
    """A startup file: {'points': {name: ns}, 'sums': {name: (ns, count)}, 'child': pid}."""
    table = {"points": {}, "sums": {}, "child": None}
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            if words[0] == "point" and len(words) == 3:
                table["points"][words[1]] = int(words[2])
            elif words[0] == "sum" and len(words) == 4:
                table["sums"][words[1]] = (int(words[2]), int(words[3]))
            elif words[0] == "child" and len(words) == 2:
                table["child"] = int(words[1])
    return table


def timed(command, cwd, env, log):
    start_ns = time.monotonic_ns()
    with open(log, "ab") as out:
        result = subprocess.run(command, cwd=cwd, env=env, stdout=out, stderr=out)
    end_ns = time.monotonic_ns()
    return start_ns, end_ns, result.returncode


def timeline(trace_dir, start_ns, end_ns):
    """Steps (ms) of one capguard run, from the tables in trace_dir; None without run's table."""
    names = os.listdir(trace_dir) if os.path.isdir(trace_dir) else []
    run_files = [n for n in names if n.startswith("capguard-run.") and n.endswith(".startup")]
    if not run_files:
        return None
    run = read_table(os.path.join(trace_dir, run_files[0]))
    child, others = None, []
    for name in names:
        if not (name.startswith("capguard.") and name.endswith(".startup")):
            continue
        table = read_table(os.path.join(trace_dir, name))
        if name == f"capguard.{run['child']}.startup":
            child = table
        else:
            others.append(table)
    rp = run["points"]
    points = [("launch", start_ns)]
    points += [(n, rp[n]) for n in ("run_command", "fork") if n in rp]
    if child is not None:
        points += [(n, child["points"][n]) for n in CHILD_POINTS if n in child["points"]]
    points += [(n, rp[n]) for n in ("child_exited", "traces_waited", "analysis_done",
                                    "report_written") if n in rp]
    points.append(("end", end_ns))
    # In the order they happened (the program's own CUPTI client may attach capguard before
    # cuInit's injection entry).
    points = [points[0]] + sorted(points[1:-1], key=lambda p: p[1]) + [points[-1]]
    steps = {}
    for (_, before), (name, at) in zip(points, points[1:]):
        steps[name] = (at - before) / 1e6
    cp = child["points"] if child else {}
    derived = {}
    if "init_begin" in cp and "init_done" in cp:
        derived["attach (init_begin to init_done)"] = (cp["init_done"] - cp["init_begin"]) / 1e6
    if "fork" in rp and "child_exited" in rp:
        derived["program under capguard (fork to waitpid)"] = (rp["child_exited"] - rp["fork"]) / 1e6
    if "child_exited" in rp:
        derived["after the program (waitpid to end)"] = (end_ns - rp["child_exited"]) / 1e6
    if "process_start" in cp and "constructor" in cp:
        derived["process start (/proc, 10 ms ticks) to constructor"] = (
            (cp["constructor"] - cp["process_start"]) / 1e6)
    sums = {}
    for name in SUMS:
        ns, count = child["sums"].get(name, (0, 0)) if child else (0, 0)
        sums[f"sum {name} ms"] = ns / 1e6
        sums[f"sum {name} count"] = count
    attached_others = sum(1 for t in others if "init_done" in t["points"])
    derived["other processes with libcapguard loaded"] = len(others)
    derived["  of which attached to CUDA"] = attached_others
    return {"steps": steps, "derived": derived, "sums": sums, "child_found": child is not None}


def build_cxx(source, out_dir):
    binary = os.path.join(out_dir, os.path.splitext(os.path.basename(source))[0])
    if os.path.exists(binary) and os.path.getmtime(binary) >= os.path.getmtime(source):
        return binary
    command = ["nvcc", "-O0", "-g", "-lineinfo", "-arch=sm_90", "-Xcompiler",
               "-fno-omit-frame-pointer", "-I" + os.path.join(ROOT, "testcases"), "-o", binary,
               source]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        print(f"cannot build {source} (left out):\n{result.stderr}", file=sys.stderr)
        return None
    return binary


def build_empty_subscriber(out_dir):
    library = os.path.join(out_dir, "empty_subscriber.so")
    source = os.path.join(ROOT, "interposer", "smoke", "empty_subscriber.cpp")
    command = ["nvcc", "-shared", "-Xcompiler", "-fPIC", "-o", library, source, "-lcupti"]
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    except OSError as error:
        print(f"no empty subscriber ({error})", file=sys.stderr)
        return None
    if result.returncode != 0:
        print(f"cannot build the empty subscriber (left out):\n{result.stderr}", file=sys.stderr)
        return None
    return library


def med(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    if all(isinstance(v, int) for v in values):
        return f"{statistics.median(values):g}"
    return f"{statistics.median(values):.2f}"


def spread(values):
    return f"{statistics.median(values):.0f} ({min(values):.0f}-{max(values):.0f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capguard", required=True, help="the capguard executable")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default="/tmp/capguard-startup", help="traces, logs, json")
    default_python = "/opt/torch/.venv/bin/python3"
    parser.add_argument("--python", default=default_python if os.path.exists(default_python)
                        else "python3")
    parser.add_argument("--only", help="substring of the program names to run")
    parser.add_argument("--program", action="append", default=[], metavar="NAME=COMMAND",
                        help="another program (a shell-quoted command line), run from the tree")
    parser.add_argument("--cxx-source", default=DEFAULT_CXX)
    parser.add_argument("--cxx-binary", help="a built C++ program instead of --cxx-source")
    parser.add_argument("--no-cxx", action="store_true")
    parser.add_argument("--no-empty-subscriber", action="store_true")
    args = parser.parse_args()

    capguard = os.path.abspath(args.capguard)
    out = os.path.abspath(args.out)
    os.makedirs(os.path.join(out, "logs"), exist_ok=True)
    programs = [(name, [args.python, script], PY_DIR) for name, script in PYTHON_PROGRAMS]
    if not args.no_cxx:
        binary = args.cxx_binary or build_cxx(args.cxx_source, out)
        if binary:
            programs.append((os.path.basename(binary), [os.path.abspath(binary)], ROOT))
    for spec in args.program:
        name, _, command = spec.partition("=")
        programs.append((name, shlex.split(command), ROOT))
    if args.only:
        programs = [p for p in programs if args.only in p[0]]

    env_native = dict(os.environ)
    env_native.pop("CAPGUARD_STARTUP_TIMES", None)
    env_run = dict(os.environ, CAPGUARD_STARTUP_TIMES="1")
    empty = None if args.no_empty_subscriber else build_empty_subscriber(out)
    env_empty = dict(env_native, CUDA_INJECTION64_PATH=empty) if empty else None
    results = []
    for name, command, cwd in programs:
        native, run, floor, lines, statuses = [], [], [], [], set()
        log = os.path.join(out, "logs", name + ".log")
        for round_index in range(args.rounds):
            trace_dir = os.path.join(out, "traces", name, str(round_index))
            shutil.rmtree(trace_dir, ignore_errors=True)
            run_command = [capguard, "run", "--trace-dir", trace_dir, "--"] + command
            order = ["native", "run"] + (["empty"] if empty else [])
            shift = round_index % len(order)  # which goes first turns round by round
            for which in order[shift:] + order[:shift]:
                if which == "empty":
                    start, end, _ = timed(command, cwd, env_empty, log)
                    floor.append((end - start) / 1e6)
                elif which == "native":
                    start, end, native_status = timed(command, cwd, env_native, log)
                    native.append((end - start) / 1e6)
                else:
                    start, end, run_status = timed(run_command, cwd, env_run, log)
                    run.append((end - start) / 1e6)
                    lines.append(timeline(trace_dir, start, end))
            statuses.add((native_status, run_status))
        results.append({"program": name, "command": command, "native_ms": native, "run_ms": run,
                        "empty_subscriber_ms": floor,
                        "exit_status_native_run": sorted(statuses), "timelines": lines})
        print(f"{name}: native {spread(native)} ms, capguard run {spread(run)} ms, "
              + (f"empty subscriber {spread(floor)} ms, " if floor else "")
              + f"statuses {sorted(statuses)}", file=sys.stderr, flush=True)

    with open(os.path.join(out, "startup.json"), "w", encoding="utf-8") as f:
        json.dump({"rounds": args.rounds, "capguard": capguard, "results": results}, f, indent=1)

    width = max([len(r["program"]) for r in results] + [10])
    print(f"\n{'program':{width}} | {'native ms':>18} | {'capguard run ms':>18} | "
          f"{'extra ms (median)':>17} | {'empty subscriber ms':>19} | statuses (native, run)")
    for r in results:
        extra = statistics.median(r["run_ms"]) - statistics.median(r["native_ms"])
        floor = spread(r["empty_subscriber_ms"]) if r["empty_subscriber_ms"] else "-"
        print(f"{r['program']:{width}} | {spread(r['native_ms']):>18} | {spread(r['run_ms']):>18} "
              f"| {extra:17.0f} | {floor:>19} | {r['exit_status_native_run']}")

    # Phases: one row per step or sum, one column per program (medians over the rounds, ms).
    rows, seen = [], set()
    for r in results:
        for t in r["timelines"]:
            if t is None:
                continue
            for section in ("steps", "derived", "sums"):
                for key in t[section]:
                    if (section, key) not in seen:
                        seen.add((section, key))
                        rows.append((section, key))
    order = {"steps": 0, "derived": 1, "sums": 2}
    step_rank = {n: i for i, n in enumerate(["run_command", "fork"] + CHILD_POINTS +
                                             ["child_exited", "traces_waited", "analysis_done",
                                              "report_written", "end"])}
    rows.sort(key=lambda row: (order[row[0]], step_rank.get(row[1], 0) if row[0] == "steps" else 0))
    label_width = max([len(f"{k}: {WHAT.get(k, '')}") for s, k in rows if s == "steps"] +
                      [len(k) for s, k in rows if s != "steps"] + [10])
    col = max(max(len(r["program"]) for r in results), 8)
    print(f"\nmedian ms per phase (steps: from the previous point of the run's timeline to this one)")
    print(f"{'phase':{label_width}} | " + " | ".join(f"{r['program']:>{col}}" for r in results))
    section_now = None
    for section, key in rows:
        if section != section_now:
            section_now = section
            print("-" * label_width + "-+-" + "-+-".join("-" * col for _ in results))
        label = f"{key}: {WHAT.get(key, '')}" if section == "steps" else key
        cells = []
        for r in results:
            values = [t[section].get(key) for t in r["timelines"] if t is not None]
            cells.append(f"{med(values):>{col}}")
        print(f"{label:{label_width}} | " + " | ".join(cells))
    missing = [r["program"] for r in results
               if any(t is None or not t["child_found"] for t in r["timelines"])]
    if missing:
        print(f"\nno start-up table of the direct child in some rounds of: {', '.join(missing)} "
              "(killed by a signal or _exit: the table is written by the exit handler)")
    print(f"\nraw values: {os.path.join(out, 'startup.json')}")


if __name__ == "__main__":
    main()
