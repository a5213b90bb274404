#!/usr/bin/env python3
"""A job of many ranks: `capguard report` of 1,024 rank traces made from a recorded
torch rank (tests/multirank/make_rank_traces.py: one finding on every rank, one on three) on 1,
2 and all cores (-j), and the merge of 1,024 per-rank JSON reports; wall and CPU time and peak
memory of each. Prints a Markdown table (docs/performance.md keeps the one measured).

    bench/multirank.py --build build [--ranks 1024] [--dir /tmp/capguard-multirank-bench]

The traces are generated once into --dir and kept. The per-rank JSON reports are one rank's
report (capguard report --one-node) copied per rank with pid, host and rank rewritten, as a
per-rank `capguard run` would have written them."""
import argparse
import copy
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(cmd):
    """Runs cmd; returns (exit status, wall seconds, CPU seconds, peak RSS in MiB)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return (os.waitstatus_to_exitcode(status), time.monotonic() - start,
            usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0)


def rank_reports(capguard, traces, out, ranks, diverged):
    """One JSON report per rank, from the reports of one plain and one diverged rank's trace."""
    os.makedirs(out, exist_ok=True)
    models = {}
    for rank in (0, min(diverged)):
        host, pid = "node%03d" % (rank // 8), 1000 + rank % 8
        path = os.path.join(out, "model%d.json" % rank)
        subprocess.run([capguard, "report", "--one-node", "-q", "-o", "json:" + path,
                        os.path.join(traces, "capguard.%d.%s.trace" % (pid, host))],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(path, encoding="utf-8") as f:
            models[rank in diverged] = json.load(f)
        os.remove(path)
    for rank in range(ranks):
        host, pid = "node%03d" % (rank // 8), 1000 + rank % 8
        report = copy.deepcopy(models[rank in diverged])
        for p in report["processes"]:
            p["pid"] = pid
            p["trace"] = "capguard.%d.%s.trace" % (pid, host)
            p["who"].update(host=host, rank=rank, local_rank=rank % 8, gpu=str(rank % 8),
                            label="rank %d (node %s, GPU %d)" % (rank, host, rank % 8))
        for f in report["findings"]:
            f.update(pid=pid, host=host, rank=rank, who="rank %d (node %s, GPU %d)" % (rank, host, rank % 8))
        for c in report["captures"]:
            c["pid"] = pid
        with open(os.path.join(out, "rank%04d.json" % rank), "w", encoding="utf-8") as f:
            json.dump(report, f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--dir", default="/tmp/capguard-multirank-bench")
    args = ap.parse_args()
    capguard = os.path.abspath(os.path.join(args.build, "capguard"))
    diverged = {5, 517, 1000}
    traces = os.path.join(args.dir, "traces%d" % args.ranks)
    if not os.path.isdir(traces):
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "multirank", "make_rank_traces.py"),
                        traces, "--ranks", str(args.ranks)], check=True)
    size = sum(os.path.getsize(os.path.join(traces, f)) for f in os.listdir(traces)) / 1e6
    reports = os.path.join(args.dir, "reports%d" % args.ranks)
    if not os.path.isdir(reports):
        rank_reports(capguard, traces, reports, args.ranks, diverged)
    cores = os.cpu_count()
    print(f"{args.ranks} rank traces, {size:.0f} MB with their .symbols; {cores} cores")
    print()
    print("| what | -j | wall s | CPU s | peak RSS MiB | exit |")
    print("|---|---|---|---|---|---|")
    failed = False
    for jobs in sorted({1, 2, cores}):
        status, wall, cpu, rss = measure([capguard, "report", "-q", "-j", str(jobs), "-o",
                                          "json:/dev/null", traces])
        failed |= status != 1
        print(f"| report of {args.ranks} traces | {jobs} | {wall:.1f} | {cpu:.1f} | {rss:.0f} | {status} |")
    files = sorted(os.path.join(reports, f) for f in os.listdir(reports))
    status, wall, cpu, rss = measure([capguard, "report", "-q", "-o", "json:/dev/null"] + files)
    failed |= status != 1
    print(f"| merge of {len(files)} JSON reports | - | {wall:.1f} | {cpu:.1f} | {rss:.0f} | {status} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
