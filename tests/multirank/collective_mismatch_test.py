#!/usr/bin/env python3
"""ctest collective_mismatch: rank-collective-mismatch over the traces of a job, and over its
nodes' JSON reports merged. The ranks are copies of the recorded rank 0 of
testcases/multi/torch_allreduce_2ranks_ok.py (an NCCL all-reduce and a multiply captured in
torch.cuda.graph, replayed 3 times), 8 ranks a node; on the odd rank the multiply's grid is
halved (it captured another batch size). Checked for 2 and 1,024 ranks: matching ranks give no
finding; the odd rank gives the graph only it captured and the replay where it parts; killed
(no end record in any trace), also the graph each rank launched last. The figures printed are
the wall times of the reports.

  collective_mismatch_test.py CAPGUARD [--ranks 2,1024]"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = os.path.join(ROOT, "testcases", "recorded", "traces", "torch_allreduce_2ranks_ok",
                      "capguard.671.vm.trace")
RECORDED_PID = 0x29f
MULTIPLY_GRID = "x40,1,1,80,1,1,0"  # the multiply kernel's node in the recorded graph
RANKS_PER_NODE = 8
RULE = "rank-collective-mismatch"
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def make_job(out, ranks, odd=None, killed=False):
    with open(SOURCE, encoding="utf-8") as f:
        lines = f.read().splitlines()
    with open(SOURCE + ".symbols", encoding="utf-8") as f:
        symbols = f.read().splitlines()
    assert sum(MULTIPLY_GRID in l for l in lines) == 1, "the recorded graph changed"
    for rank in range(ranks):
        node, local = divmod(rank, RANKS_PER_NODE)
        host = "node%03d" % node
        pid = 1000 + local
        os.makedirs(os.path.join(out, host), exist_ok=True)
        text = []
        for line in lines:
            if line.startswith("p "):
                fields = line.split(" ")
                fields[1] = "%x" % pid
                line = " ".join(fields)
            elif line.startswith("h "):
                line = "h %s RANK=%d LOCAL_RANK=%d WORLD_SIZE=%d" % (host, rank, local, ranks)
            elif line.startswith("z ") and killed:
                continue
            elif rank == odd and MULTIPLY_GRID in line:
                line = line.replace(MULTIPLY_GRID, "x20,1,1,80,1,1,0")
            text.append(line)
        name = os.path.join(out, host, "capguard.%d.%s.trace" % (pid, host))
        with open(name, "w", encoding="utf-8") as f:
            f.write("\n".join(text) + "\n")
        with open(name + ".symbols", "w", encoding="utf-8") as f:
            for line in symbols:
                if line.startswith("%x\t" % RECORDED_PID):
                    line = "%x%s" % (pid, line[len("%x" % RECORDED_PID):])
                f.write(line + "\n")


def report(capguard, out_json, *inputs):
    start = time.monotonic()
    run = subprocess.run([capguard, "report", "-q", "--fail-on", "never", "-o", "json:" + out_json,
                          *inputs], capture_output=True, text=True)
    seconds = time.monotonic() - start
    if run.returncode != 0:
        print(run.stderr)
    with open(out_json, encoding="utf-8") as f:
        data = json.load(f)
    return run.returncode, seconds, [f for f in data["findings"] if f["rule"] == RULE]


def both_ways(capguard, job, ranks, label):
    """The findings of one report over all traces, and of the nodes' reports merged."""
    nodes = sorted(d for d in os.listdir(job) if d.startswith("node"))
    code, seconds, direct = report(capguard, os.path.join(job, "all.json"),
                                   *[os.path.join(job, n) for n in nodes])
    check(code == 0, "%s: report over %d traces exits 0 (%.2f s)" % (label, ranks, seconds))
    start = time.monotonic()
    node_findings = 0
    for node in nodes:
        code, _, found = report(capguard, os.path.join(job, node + ".json"), "--one-node",
                                os.path.join(job, node))
        node_findings += len(found) if ranks > RANKS_PER_NODE else 0
    node_seconds = time.monotonic() - start
    code, seconds, merged = report(capguard, os.path.join(job, "merged.json"),
                                   *[os.path.join(job, n + ".json") for n in nodes])
    check(code == 0, "%s: merge of %d node reports exits 0 (nodes %.2f s, merge %.2f s)"
          % (label, len(nodes), node_seconds, seconds))
    messages = lambda found: sorted(f["message"] for f in found)
    check(messages(direct) == messages(merged),
          "%s: the merge gives the findings of one report over all traces" % label)
    return direct


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("capguard")
    parser.add_argument("--ranks", default="2,1024")
    args = parser.parse_args()
    for ranks in (int(r) for r in args.ranks.split(",")):
        odd = 1 if ranks == 2 else 517
        others = "rank 0" if ranks == 2 else "ranks 0-516, 518-1023"
        with tempfile.TemporaryDirectory() as t:
            job = os.path.join(t, "matching")
            make_job(job, ranks)
            found = both_ways(args.capguard, job, ranks, "%d matching ranks" % ranks)
            check(found == [], "%d matching ranks: no %s" % (ranks, RULE))

            job = os.path.join(t, "odd")
            make_job(job, ranks, odd=odd)
            found = both_ways(args.capguard, job, ranks, "%d ranks, rank %d odd" % (ranks, odd))
            words = [f["message"] for f in found]
            check(len(found) == 2, "rank %d odd: 2 findings (%d)" % (odd, len(found)))
            check(any(w.startswith("rank %d captured a graph at " % odd) and
                      "torch_allreduce_2ranks_ok.py:" in w and
                      "that %s never captured (1 collective: AllReduce_Sum_f32_RING_LL)" % others in w
                      for w in words), "rank %d odd: the graph only it captured, at the user's line" % odd)
            check(any(w.startswith("the ranks' graph replays part at replay 1 ") and
                      ("rank %d replays the graph" % odd) in w for w in words),
                  "rank %d odd: the replay where the ranks part" % odd)
            check(all(f["rank"] == odd for f in found), "rank %d odd: its findings are its own" % odd)

            job = os.path.join(t, "killed")
            make_job(job, ranks, odd=odd, killed=True)
            found = both_ways(args.capguard, job, ranks, "%d ranks killed" % ranks)
            check(any(f["message"].startswith("the job ended while replaying (%d of its traces have "
                                              "no end" % ranks) and
                      ("rank %d last launched the graph" % odd) in f["message"] and
                      ("while %s last launched" % others) in f["message"] for f in found),
                  "%d ranks killed: which graph each rank launched last" % ranks)
    if failures:
        print("%d failed" % len(failures))
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
