#!/usr/bin/env python3
"""The hostile corpus's fourth round (docs/security.md): the whole-job merge, rank
records and the readers of JSON reports, baselines and suppressions. Each case builds its
inputs here, runs capguard under the corpus's limits (hostile_corpus.py: ulimit -v, CPU time,
a wall clock for what would block) and checks the exit status and what was said. Every case
failed before the merge was hardened.

    hostile_merge.py PATH/TO/capguard [CASE...]
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_corpus as hc  # noqa: E402  the trace builder and the limits

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST = "gpu1.cluster"  # a host name with a dot: the manual's $(hostname) must name its directory


def ranked(text, rank, world, host=HOST, start=None):
    """A trace (hostile_corpus.trace) of format 8 with the 'h' record of a launcher's rank."""
    text = text.replace("v 0.1.0 2", "v 0.1.0 8")
    if start is not None:
        text = re.sub(r"^p (\w+) 1 0$", r"p \1 1 %x" % start, text, flags=re.M)
    return re.sub(r"^(c [^\n]*)$", r"\1\nh %s RANK=%d LOCAL_RANK=%d WORLD_SIZE=%d"
                  % (hc.esc(host), rank, rank, world), text, count=1, flags=re.M)


def clean(pid=0x1E240, end=True, attach="i ok cupti"):
    text = "v 0.1.0 2\np %x 1 0\nc ./app\n%s\n" % (pid, attach) if attach else \
        "v 0.1.0 2\np %x 1 0\nc ./app\n" % pid
    return text + ("z 28 0\n" if end else "")


def capguard_run(capguard, args, cwd, env=None):
    try:
        proc = subprocess.run([capguard] + args, cwd=cwd, capture_output=True, text=True,
                              errors="replace", timeout=hc.TIMEOUT, preexec_fn=hc.limit,
                              env=dict(os.environ, **(env or {})))
        return proc.returncode, proc.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


def expect(problems, got, status, stderr, *said):
    if got[0] != status:
        problems.append("exit %s, expected %s; stderr: %s" % (got[0], status, got[1][-700:]))
    for words in said:
        if words not in got[1]:
            problems.append("stderr does not say %r: %s" % (words, got[1][-700:]))


def node_report(capguard, d, name, traces, *extra):
    out = os.path.join(d, name)
    got = capguard_run(capguard, ["report", "--one-node", "-q", *extra, "-o", "json:" + out, *traces], d)
    return out, got


# --- 1. The manual's recipe run twice with one --trace-dir --------------------------------------

def manual_recipe():
    """The node step and the merge of docs/multi-rank.md, as the manual writes them."""
    with open(os.path.join(ROOT, "docs", "multi-rank.md"), encoding="utf-8") as f:
        text = f.read()
    block = text[:text.index("\n`--fail-on never` inside a launcher")]
    lines = [l.strip() for l in block.splitlines() if l.startswith("    ")]
    cg = next(l for l in lines if l.startswith("CG="))
    node = next(l for l in lines if l.startswith("capguard report --one-node"))
    merge = next(l for l in lines if l.startswith("capguard report -o"))
    return cg, node, merge


def run_job(capguard, d, trace_dir, job_traces, host=HOST):
    """One job: a `capguard run --fail-on never --trace-dir DIR` per rank (torchrun, capguard
    inside: the rank variables set), each rank's program writing the trace given for it."""
    problems = []
    for rank, text in enumerate(job_traces):
        src = os.path.join(d, "rank%d.src" % rank)
        hc.write(src, ranked(text, rank, len(job_traces), host=host))
        script = 'cp %s "$CAPGUARD_TRACE_DIR/capguard.$$.%s.trace"' % (src, host)
        got = capguard_run(capguard, ["run", "-q", "--fail-on", "never", "--no-require-attach",
                                      "--trace-dir", trace_dir, "--", "/bin/sh", "-c", script], d,
                           {"RANK": str(rank), "LOCAL_RANK": str(rank),
                            "WORLD_SIZE": str(len(job_traces)), "CAPGUARD_HOST": host})
        if got[0] != 0:
            problems.append("rank %d's run exited %s: %s" % (rank, got[0], got[1][-400:]))
    return problems


def recipe_steps(capguard, d, cg):
    """The manual's node step and merge, through the shell, $(hostname) giving HOST."""
    _, node, merge = manual_recipe()
    bin_dir = os.path.join(d, "bin")
    hc.write(os.path.join(bin_dir, "hostname"), "#!/bin/sh\necho %s\n" % HOST)
    os.chmod(os.path.join(bin_dir, "hostname"), 0o755)
    hc.write(os.path.join(bin_dir, "capguard"), '#!/bin/sh\nexec %s "$@"\n' % capguard)
    os.chmod(os.path.join(bin_dir, "capguard"), 0o755)
    env = dict(os.environ, CG=cg, PATH=bin_dir + ":" + os.environ["PATH"])
    results = []
    for step in (node, merge):
        proc = subprocess.run(["/bin/sh", "-c", step], cwd=d, env=env, capture_output=True,
                              text=True, errors="replace", timeout=hc.TIMEOUT, preexec_fn=hc.limit)
        results.append((proc.returncode, proc.stderr))
    return results


def case_recipe_twice_one_trace_dir(capguard, d):
    """Job 1 clean, job 2 with an error on rank 0, the same --trace-dir: job 2's gate failed to
    see it (exit 0, job 1's traces merged). Now the node step refuses the directory of two runs."""
    cg = os.path.join(d, "cg")
    problems = run_job(capguard, d, cg, [clean(), clean(0x1E241)])
    problems += run_job(capguard, d, cg, [hc.trace(), clean(0x1E241)])
    node, merge = recipe_steps(capguard, d, cg)
    if merge[0] == 0 or node[0] == 0:
        problems.append("job 2's error passed the gate: node %s, merge %s" % (node[0], merge[0]))
    if "holds the traces of more than one run" not in node[1]:
        problems.append("the node step does not say why: " + node[1][-500:])
    # The node step as the README wrote it before the merge was hardened, `DIR/$(hostname)/*/`, with a host
    # without dots (the issue's reproduction): it read job 1's clean rank0/ and passed (exit 0).
    # rank0/ holds job 1's traces and job 2's run.XXXXXX: refused, not read as job 2's.
    old_cg = os.path.join(d, "old")
    for job in ([clean(), clean(0x1E241)], [hc.trace(), clean(0x1E241)]):
        problems += run_job(capguard, d, old_cg, job, host="gpu1")
    old_node = "capguard report --one-node -q -o json:$CG/gpu1.json $CG/gpu1/*/"
    got = subprocess.run(["/bin/sh", "-c", old_node.replace("capguard", capguard, 1)], cwd=d,
                         env=dict(os.environ, CG=old_cg), capture_output=True, text=True,
                         errors="replace", timeout=hc.TIMEOUT, preexec_fn=hc.limit)
    if got.returncode != 3 or "holds the traces of more than one run" not in got.stderr:
        problems.append("the pre-issue-52 node step $CG/gpu1/*/ over two jobs: exit %s, expected 3 "
                        "saying why: %s" % (got.returncode, got.stderr[-500:]))
    return problems


def case_recipe_twice_per_job(capguard, d):
    """The manual's recipe as written (a directory per job), twice: the second job's error
    fails its gate with exit 1 (its finding), and the first job's traces play no part."""
    cg_line = manual_recipe()[0]
    if "$SLURM_JOB_ID" not in cg_line:
        return ["docs/multi-rank.md's CG= line names no job: " + cg_line]
    problems = []
    for job, traces, status in ((1, [clean(), clean(0x1E241)], 0), (2, [hc.trace(), clean(0x1E241)], 1)):
        cg = os.path.join(d, "cg", "job-%d" % job)  # CG=/shared/cg/job-$SLURM_JOB_ID
        problems += run_job(capguard, d, cg, traces)
        node, merge = recipe_steps(capguard, d, cg)
        if merge[0] != status or node[0] != status:
            problems.append("job %d: node exit %s, merge exit %s, expected %d: %s"
                            % (job, node[0], merge[0], status, (node[1] + merge[1])[-600:]))
        if job == 2 and "sync-during-capture" not in merge[1]:
            problems.append("job 2's merge does not name its finding: " + merge[1][-400:])
    return problems


# --- 1. A JSON report and a trace of the same file name ------------------------------------------

def case_json_and_trace_same_name(capguard, d):
    """A node's report of a clean process, and in another directory a trace of the same file
    name of another process (same pid and host, another start: a second container) with an
    error: skipped by its name alone, the error was hidden (exit 0)."""
    hc.write(os.path.join(d, "a", "capguard.1.trace"), ranked(clean(), 0, 2, start=1000))
    hc.write(os.path.join(d, "a1", "capguard.2.trace"), ranked(clean(0x1E241), 1, 2, start=1000))
    node, got = node_report(capguard, d, "a.json", [os.path.join(d, "a"), os.path.join(d, "a1")])
    problems = [] if got[0] == 0 else ["node report: exit %s: %s" % got]
    hc.write(os.path.join(d, "b", "capguard.1.trace"), ranked(hc.trace(), 0, 2, start=2000))
    expect(problems, capguard_run(capguard, ["report", node, os.path.join(d, "b")], d), 1, "",
           "sync-during-capture")
    # The same trace beside its report: one process, read once (not a doubt, not twice).
    got = capguard_run(capguard, ["report", "-o", "json:" + os.path.join(d, "m.json"), node,
                                  os.path.join(d, "a"), os.path.join(d, "a1")], d)
    expect(problems, got, 0, "")
    if os.path.exists(os.path.join(d, "m.json")):
        n = len(json.load(open(os.path.join(d, "m.json")))["processes"])
        if n != 2:
            problems.append("the trace beside its report counted %d processes, not 2" % n)
    # The same process under another file name: in two inputs, fails closed.
    hc.write(os.path.join(d, "c", "renamed.trace"), ranked(clean(), 0, 2, start=1000))
    expect(problems, capguard_run(capguard, ["report", node, os.path.join(d, "c")], d), 3, "",
           "is in two inputs")
    return problems


# --- 1. Node reports judged with another gate -----------------------------------------------------

def gate_cases():
    ranks = lambda first: [ranked(clean(0x1E241), 1, 2)]
    return {
        "node_fail_on_never_attach_failed": ranked(clean(attach="i failed no%20CUPTI"), 0, 2),
        "node_fail_on_never_no_end": ranked(clean(end=False), 0, 2),
        "node_fail_on_never_no_attach": ranked(clean(attach=None), 0, 2),
        "node_fail_on_never_rehearse_never_ran": ranked(
            clean().replace("i ok cupti\n", "i ok cupti\nq train_step*\n").replace("v 0.1.0 2", "v 0.1.0 6"), 0, 2),
    }


def make_gate_case(text):
    def case(capguard, d):
        hc.write(os.path.join(d, "n", "capguard.1.trace"), text)
        hc.write(os.path.join(d, "n", "capguard.2.trace"), ranked(clean(0x1E241), 1, 2))
        node, got = node_report(capguard, d, "n.json", [os.path.join(d, "n")], "--fail-on", "never")
        problems = [] if got[0] == 0 else ["node report: exit %s: %s" % got]
        expect(problems, capguard_run(capguard, ["report", node], d), 3, "", "--fail-on never")
        # Judged with the merge's gate, the node's own problem fails the merge closed too.
        node, got = node_report(capguard, d, "e.json", [os.path.join(d, "n")])
        expect(problems, got, 3, "")
        expect(problems, capguard_run(capguard, ["report", node], d), 3, "")
        return problems
    return case


def case_node_without_gate(capguard, d):
    """A node report that does not say which gate judged it (hand-made, or older): not vouched for."""
    hc.write(os.path.join(d, "n", "capguard.1.trace"), ranked(clean(), 0, 1))
    node, _ = node_report(capguard, d, "n.json", [os.path.join(d, "n")])
    data = json.load(open(node))
    data.pop("fail_on", None)
    json.dump(data, open(node, "w"))
    problems = []
    expect(problems, capguard_run(capguard, ["report", node], d), 3, "", "does not say which --fail-on")
    return problems


def case_ranks_claimed_by_two_hosts(capguard, d):
    """Two node reports, each claiming ranks 0 and 1 of 2, from two hosts: exit 0 before."""
    problems, nodes = [], []
    for host in ("a", "b"):
        dd = os.path.join(d, host)
        for rank in (0, 1):
            hc.write(os.path.join(dd, "capguard.%d.trace" % (rank + 1)),
                     ranked(clean(0x100 + rank), rank, 2, host=host, start=5 + rank))
        node, got = node_report(capguard, d, host + ".json", [dd])
        nodes.append(node)
    expect(problems, capguard_run(capguard, ["report", *nodes], d), 3, "",
           "rank 0 is claimed by processes of hosts a and b")
    return problems


def case_same_json_twice(capguard, d):
    """The same report named twice (and through a symlink): read once, its findings once."""
    hc.write(os.path.join(d, "n", "capguard.1.trace"), ranked(hc.trace(), 0, 1, start=7))
    node, _ = node_report(capguard, d, "n.json", [os.path.join(d, "n")])
    os.symlink(node, os.path.join(d, "link.json"))
    out = os.path.join(d, "m.json")
    problems = []
    expect(problems, capguard_run(capguard, ["report", "-q", "-o", "json:" + out, node, node,
                                             os.path.join(d, "link.json")], d), 1, "")
    if os.path.exists(out) and len(json.load(open(out))["findings"]) != 1:
        problems.append("findings counted %d times" % len(json.load(open(out))["findings"]))
    shutil.copy(node, os.path.join(d, "copy.json"))  # a copy: the same process in two inputs
    expect(problems, capguard_run(capguard, ["report", node, os.path.join(d, "copy.json")], d), 3, "",
           "is in two inputs")
    return problems


# --- 2. Readers of a path that is not a regular file -------------------------------------------------

def case_fifo_and_devices_as_inputs(capguard, d):
    problems = []
    os.mkfifo(os.path.join(d, "fifo.json"))
    os.symlink(os.path.join(d, "fifo.json"), os.path.join(d, "link.json"))
    hc.write(os.path.join(d, "t", "capguard.1.trace"), hc.trace())
    for args, status, said in (
            (["report", os.path.join(d, "fifo.json")], 3, "FIFO"),
            (["report", os.path.join(d, "link.json")], 3, "FIFO"),
            (["report", "/dev/zero.json" if os.path.exists("/dev/zero.json") else "/dev/zero"], 3, ""),
            (["report", "--baseline", os.path.join(d, "fifo.json"), os.path.join(d, "t")], 2, "FIFO"),
            (["report", "--suppressions", os.path.join(d, "fifo.json"), os.path.join(d, "t")], 2, "FIFO"),
            (["report", "--baseline", "/dev/zero", os.path.join(d, "t")], 2, "regular")):
        got = capguard_run(capguard, args, d)
        if got[0] != status or said not in got[1]:
            problems.append("%s: exit %s, expected %d saying %r: %s" % (" ".join(args[1:]), got[0],
                                                                       status, said, got[1][-300:]))
    # /dev/zero as a JSON report: through a name ending in .json.
    os.symlink("/dev/zero", os.path.join(d, "zero.json"))
    expect(problems, capguard_run(capguard, ["report", os.path.join(d, "zero.json")], d), 3, "",
           "not a regular file")
    return problems


def case_cupti_fifo_preflight(capguard, d):
    """CAPGUARD_CUPTI naming a FIFO hung `run --fail-fast` in dlopen."""
    os.mkfifo(os.path.join(d, "libcupti.so.13"))
    got = capguard_run(capguard, ["run", "--fail-fast", "--", "/bin/true"], d,
                       {"CAPGUARD_CUPTI": os.path.join(d, "libcupti.so.13")})
    return [] if got[0] != "timeout" else ["run --fail-fast hung on a FIFO named by CAPGUARD_CUPTI"]


def case_duplicate_json_keys(capguard, d):
    """A report whose "findings" key appears twice: Python and jq read the last (an error),
    capguard read the first (none). Now refused as damaged."""
    hc.write(os.path.join(d, "n", "capguard.1.trace"), ranked(hc.trace(), 0, 1))
    node, _ = node_report(capguard, d, "n.json", [os.path.join(d, "n")])
    text = open(node).read()
    hc.write(node, text.replace('"findings": [', '"findings": [], "findings": [', 1)
             if '"findings": [' in text else text.replace('"findings":[', '"findings":[],"findings":[', 1))
    problems = []
    expect(problems, capguard_run(capguard, ["report", node], d), 3, "", "appears twice")
    # The first value read alone makes a consistent report: the finding a note (exit 0 before:
    # the gate passed), an error to Python and jq.
    hc.write(node, text.replace('"severity": "error"', '"severity": "note", "severity": "error"', 1))
    if '"severity": "note", "severity": "error"' not in open(node).read():
        problems.append("the node report has no \"severity\": \"error\" to repeat")
    if json.load(open(node))["findings"][0]["severity"] != "error":
        problems.append("Python does not read the last severity")
    expect(problems, capguard_run(capguard, ["report", node], d), 3, "", "appears twice")
    return problems


# --- 3. Bounds -------------------------------------------------------------------------------------

def case_world_size_4294967295(capguard, d):
    hc.write(os.path.join(d, "t", "capguard.1.trace"), ranked(clean(), 0, 4294967295))
    problems = []
    expect(problems, capguard_run(capguard, ["report", os.path.join(d, "t")], d), 3, "",
           "ranks 1-4294967294 of 4294967295 never reported")
    return problems


def case_jobs_100000(capguard, d):
    """-j 100000 over more traces than threads fit under the memory limit (each reserves its
    stack): std::terminate before (exit 134). Now -j is refused past 1024, and at -j 1024 the
    workers that cannot start leave their traces to the others; and no more than four workers a
    CPU run: 1024 of them out of memory at once emptied the runtime's emergency exception pool
    (std::terminate, 1 run in 5)."""
    n = 1100  # 1024 stacks of 8 MiB are more than the 2 GB limit
    for i in range(n):
        hc.write(os.path.join(d, "t", "capguard.%d.trace" % (i + 1)), hc.trace(pid=0x1E250 + i))
    problems = []
    got = capguard_run(capguard, ["report", "-q", "-j", "100000", os.path.join(d, "t")], d)
    if got[0] not in (1, 2):
        problems.append("-j 100000: exit %s: %s" % (got[0], got[1][-300:]))
    out = os.path.join(d, "out.json")
    got = capguard_run(capguard, ["report", "-q", "-j", "1024", "-o", "json:" + out,
                                  os.path.join(d, "t")], d)
    # The findings (exit 1), every trace read; or, when the threads that did start took the
    # memory the traces needed, out of memory said and the gate failed closed (exit 3). Never
    # a signal.
    if got[0] == 1:
        if len(json.load(open(out))["processes"]) != n:
            problems.append("-j 1024: not every trace was read")
    elif got[0] != 3 or "out of memory" not in got[1]:
        problems.append("-j 1024: exit %s, expected 1 (the findings) or 3 (out of memory): %s"
                        % (got[0], got[1][-300:]))
    return problems


def case_20000_ranks_20000_groups(capguard, d):
    """One JSON with 20,000 processes of one rank each and 20,000 finding groups (each its own
    rule message): each group recounted every rank (over 60 s)."""
    n = 20000
    processes = [{"pid": i + 1, "command": "./app", "attached": True, "trace": "t%d" % i,
                  "started_unix_ns": str(i + 1),
                  "who": {"host": "h%d" % (i // 8), "rank": i, "rank_from": "RANK", "world_size": n}}
                 for i in range(n)]
    findings = [{"rule": "sync-during-capture", "severity": "error", "message": "m%d x" % i,
                 "api": "cudaStreamSynchronize", "pid": i + 1, "host": "h%d" % (i // 8),
                 "thread": 1, "location": {"frames": [{"function": "f%d" % i, "file": "a%d.py" % i,
                                                       "line": 1}]}}
                for i in range(n)]
    hc.write(os.path.join(d, "big.json"), json.dumps({"tool": "capguard", "version": "0.1.0",
                                                      "fail_on": "error", "processes": processes,
                                                      "captures": [], "findings": findings}))
    got = capguard_run(capguard, ["report", "-q", "-o", "json:" + os.path.join(d, "out.json"),
                                  os.path.join(d, "big.json")], d)
    return [] if got[0] == 1 else ["exit %s: %s" % (got[0], got[1][-300:])]


# --- 4. Escaping: forged strings in a node JSON ------------------------------------------------------

def case_forged_strings_in_node_json(capguard, d):
    hc.write(os.path.join(d, "n", "capguard.1.trace"), ranked(hc.trace(), 0, 1))
    node, _ = node_report(capguard, d, "n.json", [os.path.join(d, "n")])
    data = json.load(open(node))
    forged = hc.FORGED
    for f in data["findings"]:
        f["rule"], f["result"], f["thread_name"] = forged, forged, forged
        # With a frame SARIF places (file and line), so that the role is a link's label.
        f["related"] = [{"role": forged, "location": {"frames": [
            {"function": "main", "file": "src/app.py", "line": 2}]}}]
    data["rule_options"] = [{"rule": forged, "option": forged, "value": 1, "default": 2}]
    json.dump(data, open(node, "w"))
    out = {fmt: os.path.join(d, "out." + fmt) for fmt in ("txt", "sarif", "html")}
    proc = subprocess.run([capguard, "report", "-o", "text:" + out["txt"], "-o", "sarif:" + out["sarif"],
                           "-o", "html:" + out["html"], node], cwd=d, capture_output=True,
                          timeout=hc.TIMEOUT, preexec_fn=hc.limit)
    problems = []
    raw = [c.encode() for c in ("\x1b", "\r", "\x00", "\u202e", "\u2028")]
    for name, data_bytes in (("stderr", proc.stderr), ("text", open(out["txt"], "rb").read()
                                                       if os.path.exists(out["txt"]) else b"")):
        for c in raw:
            if c in data_bytes:
                problems.append("%s holds a raw %r" % (name, c))
    if os.path.exists(out["sarif"]):
        # A link is "[label](target)" with unescaped brackets (SARIF 2.1.0 3.11.6): the forged
        # label's own "](https://evil.example)" must have its bracket escaped.
        for result in json.load(open(out["sarif"], encoding="utf-8"))["runs"][0]["results"]:
            if re.search(r"(?<!\\)\]\(https://evil", result["message"]["text"]):
                problems.append("SARIF: a forged markdown link survives: " + result["message"]["text"][:300])
    else:
        problems.append("no SARIF written")
    return problems


# --- 5. --baseline and --suppressions on merged findings ----------------------------------------------

def case_baseline_and_suppressions_merged(capguard, d):
    hc.write(os.path.join(d, "n", "capguard.1.trace"), ranked(hc.trace(), 0, 1))
    node, _ = node_report(capguard, d, "n.json", [os.path.join(d, "n")])
    problems = []
    # The node's own report as the baseline: its finding is known, the merge passes.
    expect(problems, capguard_run(capguard, ["report", "--baseline", node, node], d), 0, "")
    hc.write(os.path.join(d, "supp"), "sync-during-capture:src:*/app.py\n")
    got = capguard_run(capguard, ["report", "--suppressions", os.path.join(d, "supp"), node], d)
    expect(problems, got, 0, "")
    return problems


def case_graph_coverage_merged(capguard, d):
    """Graph coverage through a merge: the job's share from the nodes' counts, the
    nodes' own coverage verdicts judged again, a forged share ignored, more entries than
    processes refused. Nodes: the recorded C++ loop (200 of 250 kernels in replays, 80.0%) and
    the PyTorch serving loop (90 of 249, 36.1%): the job is 290 of 499, 58.1%."""
    recorded = os.path.join(ROOT, "testcases", "recorded", "traces")
    problems = []
    nodes = []
    for name in ("graph_coverage_eager_between_replays", "torch_serving_sizes_coverage"):
        # Each node judged at 70%: the serving node fails its own gate.
        node, got = node_report(capguard, d, name + ".json", [os.path.join(recorded, name)],
                                "--min-graph-coverage", "70")
        nodes.append(node)
    if got[0] != 1:
        problems.append("the serving node at 70%%: exit %s, expected 1" % got[0])
    merge = ["report", "-q"]
    serving_pid = json.load(open(nodes[1]))["graph_coverage"][0]["pid"]
    expect(problems, capguard_run(capguard, merge + ["--min-graph-coverage", "55"] + nodes, d), 0, "")
    expect(problems, capguard_run(capguard, merge + ["--min-graph-coverage", "60"] + nodes, d), 1,
           "", "graph coverage after warm-up is 58.1% in the job's 2 processes",
           "(the lowest: 36.1%% in process %d" % serving_pid,
           "209 of 499 kernels ran outside graph replays")
    # A share the counts do not give is not read.
    serving = json.load(open(nodes[1]))
    serving["graph_coverage"][0]["share_percent"] = 100.0
    forged = os.path.join(d, "forged.json")
    hc.write(forged, json.dumps(serving))
    expect(problems, capguard_run(capguard, merge + ["--min-graph-coverage", "60", nodes[0], forged], d),
           1, "", "58.1% in the job's 2 processes")
    # Two entries for its one process: not a report capguard wrote.
    serving["graph_coverage"].append(serving["graph_coverage"][0])
    hc.write(forged, json.dumps(serving))
    expect(problems, capguard_run(capguard, merge + [nodes[0], forged], d), 3, "",
           "graph_coverage has 2 entries for 1 processes")
    return problems


# --- 6. A JSON baseline and a finding in a stripped function ------------------------------------

def case_json_baseline_stripped_function(capguard, d):
    """A JSON report has no frame offsets: as a baseline it told calls in code without file and
    line apart by module alone, and one baselined call hid another's new finding (exit 0)."""
    stripped = [(0x400000, 0x400000, 0x500000, os.path.join(d, "gone", "stripped_app"))]
    for name, address in (("old", 0x401234), ("new", 0x401240)):
        hc.write(os.path.join(d, name, "capguard.1.trace"),
                 hc.trace(frames=(), modules=stripped, native=[address]))
    problems = []
    for kind in ("json", "sarif"):
        got = capguard_run(capguard, ["report", "-q", "--fail-on", "never", "-o",
                                      "%s:%s" % (kind, os.path.join(d, "old." + kind)),
                                      os.path.join(d, "old")], d)
        expect(problems, got, 0, "")
    sarif, js = os.path.join(d, "old.sarif"), os.path.join(d, "old.json")
    # A SARIF baseline holds the offsets: the same call is known, the other call is new.
    expect(problems, capguard_run(capguard, ["report", "--baseline", sarif, os.path.join(d, "old")], d), 0, "")
    expect(problems, capguard_run(capguard, ["report", "--baseline", sarif, os.path.join(d, "new")], d), 1, "")
    # A JSON baseline cannot tell the two calls apart: neither is hidden, and it says why.
    for name in ("new", "old"):
        got = capguard_run(capguard, ["report", "--baseline", js, os.path.join(d, name)], d)
        expect(problems, got, 1, "", "cannot vouch for", "SARIF baseline")
    return problems


CASES = {
    "recipe_twice_one_trace_dir": case_recipe_twice_one_trace_dir,
    "recipe_twice_per_job": case_recipe_twice_per_job,
    "json_and_trace_same_name": case_json_and_trace_same_name,
    **{name: make_gate_case(text) for name, text in gate_cases().items()},
    "node_without_gate": case_node_without_gate,
    "ranks_claimed_by_two_hosts": case_ranks_claimed_by_two_hosts,
    "same_json_twice": case_same_json_twice,
    "fifo_and_devices_as_inputs": case_fifo_and_devices_as_inputs,
    "cupti_fifo_preflight": case_cupti_fifo_preflight,
    "duplicate_json_keys": case_duplicate_json_keys,
    "world_size_4294967295": case_world_size_4294967295,
    "jobs_100000": case_jobs_100000,
    "ranks_20000_groups_20000": case_20000_ranks_20000_groups,
    "forged_strings_in_node_json": case_forged_strings_in_node_json,
    "baseline_and_suppressions_merged": case_baseline_and_suppressions_merged,
    "graph_coverage_merged": case_graph_coverage_merged,
    "json_baseline_stripped_function": case_json_baseline_stripped_function,
}


def main():
    capguard = os.path.abspath(sys.argv[1])
    only = set(sys.argv[2:])
    base = tempfile.mkdtemp(prefix="capguard-hostile-merge-")
    failed = 0
    try:
        for name, case in CASES.items():
            if only and name not in only:
                continue
            d = os.path.join(base, name)
            os.makedirs(d)
            try:
                problems = case(capguard, d)
            except subprocess.TimeoutExpired:
                problems = ["did not finish within %d s" % hc.TIMEOUT]
            print(("FAIL: " if problems else "ok: ") + name)
            for p in problems:
                print("    " + p)
            failed += bool(problems)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{failed} hostile merge case(s) failed" if failed else "all hostile merge cases passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
