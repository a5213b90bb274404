#!/usr/bin/env python3
"""ctest multirank: a job's ranks in one report. 1,024 rank traces made from a
recorded torch rank (make_rank_traces.py: one mistake on every rank, a second on ranks 5, 517
and 1000) give 2 finding groups in every format; per-node JSON reports merged give the same
groups and exit status as one report over all traces, and read no trace twice; a rank that
never reported is named and fails the gate closed.

  multirank_test.py CAPGUARD [--ranks 1024]"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def make(out, *extra):
    subprocess.run([sys.executable, os.path.join(HERE, "make_rank_traces.py"), out, *extra], check=True)


def report(capguard, *args):
    run = subprocess.run([capguard, "report", *args], capture_output=True, text=True)
    return run.returncode, run.stderr


def groups_of(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    return data, sorted((g["rule"], tuple(g["ranks"]), g["where"], g["diverged"])
                        for g in data["finding_groups"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("capguard")
    parser.add_argument("--ranks", type=int, default=1024)
    args = parser.parse_args()
    n = args.ranks
    diverged = (5, 517, 1000) if n > 1000 else (1, 2, 5)
    with tempfile.TemporaryDirectory() as t:
        env_dir = os.path.join(t, "all")
        make(env_dir, "--ranks", str(n), "--diverged", ",".join(map(str, diverged)))
        check(len([f for f in os.listdir(env_dir) if f.endswith(".trace")]) == n, f"{n} rank traces")

        # One report over all traces, on 2 workers.
        out = {fmt: os.path.join(t, "all." + fmt) for fmt in ("json", "sarif", "junit", "html", "txt")}
        status, stderr = report(args.capguard, "-j", "2", "-q", "--no-source",
                                "-o", "json:" + out["json"], "-o", "sarif:" + out["sarif"],
                                "-o", "junit:" + out["junit"], "-o", "html:" + out["html"],
                                "-o", "text:" + out["txt"], env_dir)
        check(status == 1, f"one report: exit 1 (findings), got {status}: {stderr[-300:]}")
        data, groups = groups_of(out["json"])
        all_ranks = tuple(range(n))
        expected = sorted([
            ("capture-never-ended", diverged, "on ranks %s only (3 of %d ranks)" % (", ".join(map(str, diverged)), n), True),
            ("sync-during-capture", all_ranks, "on %d of %d ranks" % (n, n), False),
        ])
        check(groups == expected, f"2 finding groups: {[g[:1] + g[2:] for g in groups]}")
        check(len(data["processes"]) == n and all("who" in p for p in data["processes"]),
              "every process says who ran it")
        first = data["findings"][0]
        check(first.get("who", "").startswith("rank ") and "(node node" in first["who"] and ", GPU " in first["who"],
              f"a finding names its rank, node and GPU: {first.get('who')}")
        with open(out["txt"], encoding="utf-8") as f:
            text = f.read()
        check(f"sync-during-capture, on {n} of {n} ranks" in text, "text: heading says on all ranks")
        check("capture-never-ended, on ranks %s only" % ", ".join(map(str, diverged)) in text,
              "text: heading says which ranks diverged")
        headings = [l for l in text.splitlines() if l.startswith("==") and ": capguard: " in l]
        check(len(headings) == 2, f"text: 2 findings printed, not {len(headings)}")
        check("capture #%d (stream 0x7777000" % (2 * n + 1) not in text and "(capture #2, " not in text.split("capture-never-ended")[1],
              "text: a message names its capture by the report's id")
        check(len(text.splitlines()) < 120, f"text: {len(text.splitlines())} lines for {n} ranks")
        check("; 2 shown, " in text and f" in {n} of {n} ranks (" in text,
              "text: summary counts the findings shown and the ranks")
        with open(out["sarif"], encoding="utf-8") as f:
            results = json.load(f)["runs"][0]["results"]
        check(len(results) == 2, f"SARIF: one result per group, {len(results)}")
        check(sorted(len(r["properties"]["ranks"]) for r in results) == [3, n], "SARIF: ranks as properties")
        with open(out["html"], encoding="utf-8") as f:
            html = f.read()
        check(html.count("<article class=\"finding") == 2 and f"on {n} of {n} ranks" in html, "HTML: 2 findings")
        suites = ET.parse(out["junit"]).getroot()
        failing = [s for s in suites if int(s.get("failures", "0")) > 0]
        check(len(failing) == n and any(p.get("name") == "rank" for s in failing for p in s.iter("property")),
              "JUnit: every rank's suite fails and names its rank")
        check(f"on {n} of {n} ranks" in open(out["junit"], encoding="utf-8").read(), "JUnit: the failure says which ranks")

        # Per node, then merge: 4 "nodes", each its own directory and JSON report.
        nodes = 4
        per = n // nodes
        node_json = []
        for node in range(nodes):
            d = os.path.join(t, "node%d" % node)
            os.makedirs(d)
            for name in os.listdir(env_dir):
                host = name.split(".")[2]
                if int(host[4:]) * 8 // per == node:
                    os.link(os.path.join(env_dir, name), os.path.join(d, name))
            j = os.path.join(d, "capguard-report.json")
            status, stderr = report(args.capguard, "-j", "1", "-q", "--one-node", "-o", "json:" + j, d)
            check(status == 1, f"node {node}: exit 1, got {status}: {stderr[-300:]}")
            node_json.append(j)
        merged = os.path.join(t, "merged.json")
        # The nodes' directories too: their traces are covered by the reports, never read twice.
        status, stderr = report(args.capguard, "-q", "-o", "json:" + merged, *node_json,
                                *[os.path.dirname(j) for j in node_json])
        check(status == 1, f"merge: exit 1 like one report, got {status}: {stderr[-300:]}")
        merged_data, merged_groups = groups_of(merged)
        check(merged_groups == groups, "merge: the same groups and ranks as one report over all traces")
        check(len(merged_data["processes"]) == n, f"merge: {len(merged_data['processes'])} processes, each once")

        # A rank that never reported fails the gate closed (clean ranks: exit 3, not 0).
        few = os.path.join(t, "few")
        make(few, "--ranks", "16", "--clean", "--diverged", "", "--drop", "3,12")
        status, stderr = report(args.capguard, "-q", "-o", "json:" + os.path.join(t, "few.json"), few)
        check(status == 3, f"missing ranks: exit 3, got {status}")
        check("ranks 3, 12 of 16 never reported" in stderr, f"missing ranks named: {stderr[-300:]}")
        status, stderr = report(args.capguard, "-q", "--one-node", "-o", "json:" + os.path.join(t, "few-node.json"), few)
        check(status == 0, f"--one-node leaves them to the merge: exit {status}")
        status, stderr = report(args.capguard, "-q", "-o", "json:" + os.path.join(t, "few-merged.json"),
                                os.path.join(t, "few-node.json"))
        check(status == 3 and "ranks 3, 12 of 16 never reported" in stderr,
              f"the merge of that report names them and exits 3: {status}")
    print("%d failed" % len(failures) if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
