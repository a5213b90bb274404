#!/usr/bin/env python3
"""Runs the testcase programs under capguard and compares its findings with the expectations
written in their sources.

Each culprit line carries `// expect: <rule-id>[, <rule-id>...]` (`<rule-id>*N`: N findings of it
on that line, e.g. from N threads; `// expect-elsewhere: <rule-id>*N` on any line: findings whose
stack has no frame of the program's own code, e.g. on a framework's own thread; `# expect:` in the Python
programs of python/, run as `python3 <name>.py` from that folder; their culprit is the Python
line, the innermost Python frame of the program's own code); a program expects exactly the
multiset of (rule, file, line) written in its source, and a correct twin expects nothing at all
(no error, warning or note). <name>_shared is the same source linked with the shared cudart.

  check_expectations.py --list                           print the expectations, run nothing
  check_expectations.py --build B --capguard C --out O   capguard run each program of B/testcases
  check_expectations.py --from-traces T --capguard C     capguard report traces recorded earlier
                                                         (T/traces/<name> or T/<name>), no GPU

A program that needs options of `capguard run` says so in a line of its source,
`// capguard-args: --rehearse step` (`#` in Python); with --from-traces, the options of them that
`capguard report` takes too (--rehearse-mode) are passed on. A rehearsed region's verdict is
expected with `// expect-rehearsal: <region> <verdict> [<warm-up executions>]` (verdicts as the
JSON report's `rehearsals` write them: capturable, capturable_after_warmup, not_capturable,
never_executed: the program then exits 3).

Prints one row per program (program | cudart | expected | found | verdict), writes O/results.json,
and exits 1 if any program fails, 2 on bad usage or a malformed expectation.
"""

import argparse
import collections
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

# Rule ids and severities, read from rules/rules.def (the one list of rules).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "scripts"))
import rule_rows  # noqa: E402  (scripts/rule_rows.py, found through the line above)

SEVERITY = {row.id: row.severity for row in rule_rows.rows()}
EXPECT = re.compile(r"(?://|#)\s*expect:\s*(.*)$")
EXPECT_ELSEWHERE = re.compile(r"(?://|#)\s*expect-elsewhere:\s*(.*)$")
CAPGUARD_ARGS = re.compile(r"(?://|#)\s*capguard-args:\s*(.*)$")
EXPECT_REHEARSAL = re.compile(r"(?://|#)\s*expect-rehearsal:\s*(\S+)\s+(\S+)(?:\s+(\d+))?\s*$")
# Graph coverage: a line that launches eagerly after the first replay (`expect-eager`: the JSON
# report's graph_coverage lists it), a program all of whose kernels after warm-up ran in graphs
# (`expect-coverage: full`), and the exit status a --min-graph-coverage gate gives
# (`expect-exit: N`).
EXPECT_EAGER = re.compile(r"(?://|#)\s*expect-eager\b")
EXPECT_FULL_COVERAGE = re.compile(r"(?://|#)\s*expect-coverage:\s*full\b")
EXPECT_EXIT = re.compile(r"(?://|#)\s*expect-exit:\s*(\d+)")
REPORT_ARGS = {"--rehearse-mode", "--min-graph-coverage"}  # capguard-args that `capguard report` takes as well (with a value)
EXIT_FINDINGS = 1  # `run` and `report` with findings at or above --fail-on (default: error)
EXIT_NOT_ATTACHED = 3
# Replaying recorded traces: a program of a suite folder recorded on no GPU machine yet is
# skipped, not failed (the top-level and python/ programs must all be recorded).
SKIP_NOT_RECORDED = "no recorded trace yet"
# In a --from-traces folder: programs, one per line, written after that folder was last recorded
# (the CUDA 12 set is recorded from a bundle built beforehand); skipped, named, until recorded.
PENDING = "pending.txt"


def pending_programs(from_traces):
    """The program names the --from-traces folder's pending.txt lists ('#' starts a comment)."""
    try:
        with open(os.path.join(from_traces, PENDING), encoding="utf-8") as listed:
            return {line.split("#", 1)[0].strip() for line in listed} - {""}
    except FileNotFoundError:
        return set()


class Program:
    def __init__(self, name, cudart, source, expected):
        self.name, self.cudart, self.source, self.expected = name, cudart, source, expected
        self.suite = "python" if cudart == "python" else "main"
        self.run_args, self.rehearsals = parse_options(source)
        self.eager, self.full_coverage, self.exit = parse_coverage_marks(source)

    def report_args(self):
        """The run options `capguard report` takes too."""
        out = []
        for i, arg in enumerate(self.run_args):
            name = arg.split("=", 1)[0]
            if name in REPORT_ARGS:
                out += [arg] if "=" in arg else self.run_args[i:i + 2]
        return out

    def expected_exit(self):
        """Every program exits 0 on its own, so capguard's status is 1 exactly when an error is
        expected; else 3 when a rehearsed region is expected never to run (the gate fails
        closed)."""
        if self.exit is not None:
            return self.exit
        has_error = any(SEVERITY[rule] == "error" for rule, _, _ in self.expected)
        if has_error:
            return EXIT_FINDINGS
        never_ran = any(verdict == "never_executed" for verdict, _ in self.rehearsals.values())
        return EXIT_NOT_ATTACHED if never_ran else 0


def parse_options(path):
    """(`capguard run` options, {region: (verdict, warm-ups or None)}) written in one source."""
    run_args, rehearsals = [], {}
    with open(path, encoding="utf-8") as source:
        for text in source:
            match = CAPGUARD_ARGS.search(text)
            if match:
                run_args += shlex.split(match.group(1))
            match = EXPECT_REHEARSAL.search(text)
            if match:
                warmups = int(match.group(3)) if match.group(3) else None
                rehearsals[match.group(1)] = (match.group(2), warmups)
    return run_args, rehearsals


def parse_coverage_marks(path):
    """({(basename, line)} expected eager, full coverage expected, exit status or None)."""
    eager, full, status = set(), False, None
    with open(path, encoding="utf-8") as source:
        for number, text in enumerate(source, start=1):
            if EXPECT_EAGER.search(text):
                eager.add((os.path.basename(path), number))
            full = full or bool(EXPECT_FULL_COVERAGE.search(text))
            match = EXPECT_EXIT.search(text)
            if match:
                status = int(match.group(1))
    return eager, full, status


def coverage_problems(program, report):
    """What differs from the expected graph coverage: eager lines missing, or eager work where
    every kernel after warm-up should have run in graphs."""
    coverage = report.get("graph_coverage", [])
    found = set()
    for process in coverage:
        for site in process.get("eager", []):
            location = site.get("location") or {}
            index = location.get("user_frame")
            frames = location.get("frames", [])
            if index is not None and index < len(frames) and frames[index].get("file"):
                found.add((os.path.basename(frames[index]["file"]), frames[index].get("line")))
    problems = [f"no eager launch reported at {file}:{line}" for file, line in sorted(program.eager - found)]
    if (program.eager or program.full_coverage) and not coverage:
        problems.append("no graph_coverage in the report")
    if program.full_coverage and any(p.get("eager_kernels") for p in coverage):
        problems.append("eager launches after warm-up, expected none")
    return problems


def rehearsal_problems(program, report):
    """What differs from the expected verdicts of rehearsed regions."""
    problems = []
    found = {r.get("name"): r for r in report.get("rehearsals", [])}
    for name, (want, warmups) in sorted(program.rehearsals.items()):
        got = found.get(name)
        if got is None:
            problems.append(f"region {name} not rehearsed")
        elif got.get("verdict") != want or (warmups is not None and got.get("warmups") != warmups):
            problems.append(f"region {name}: {got.get('verdict')} after {got.get('warmups')} warm-up(s), "
                            f"expected {want}" + (f" after {warmups}" if warmups is not None else ""))
    return problems


def parse_expectations(path):
    """The (rule, basename, line) expected from one source; raises ValueError on a bad rule."""
    expected = collections.Counter()
    with open(path, encoding="utf-8") as source:
        for number, text in enumerate(source, start=1):
            match = EXPECT.search(text)
            elsewhere = EXPECT_ELSEWHERE.search(text)
            match = match or elsewhere
            if not match:
                continue
            rules = [rule for rule in re.split(r"[,\s]+", match.group(1)) if rule]
            if not rules:
                raise ValueError(f"{path}:{number}: `expect:` names no rule")
            for rule in rules:
                rule, _, count = rule.partition("*")  # rule*N: N findings on this line
                if rule not in SEVERITY:
                    raise ValueError(f"{path}:{number}: unknown rule id {rule!r}")
                if count and not count.isdigit():
                    raise ValueError(f"{path}:{number}: bad count {count!r} after {rule}")
                where = ("?", 0) if elsewhere else (os.path.basename(path), number)
                expected[(rule, *where)] += int(count or 1)
    return expected


# Folders of programs beside the top-level ones: (folder, suite, how *.cu, *.cpp and *.py run).
# Each is built and run once: libs/ with the shared cudart and the CUDA libraries (its Python
# programs, PyTorch's NCCL and cuDNN, as python3 <name>.py from that folder), multi/ on two
# GPUs (its Python programs under torchrun, two ranks), libtorch/ by scripts/gpu_libtorch.sh.
SUITE_FOLDERS = [("libs", "libs", {".cu": "shared", ".py": "python"}),
                 ("multi", "multi", {".cu": "shared", ".py": "torchrun"}),
                 ("libtorch", "libtorch", {".cpp": "libtorch"}),
                 # Python on a CUDA 12 runtime (scripts/gpu_cuda12.sh)
                 ("cuda12", "cuda12", {".py": "python"})]
DEFAULT_SUITES = "main,python,libs"
ALL_SUITES = "main,python,libs,multi,libtorch,cuda12"
# The CUDA 12 recordings live apart, in recorded-cuda12/: --suites main,cuda12 there.
RECORDED_SUITES = "main,python,libs,multi,libtorch"


def discover(source_dir, only, suites=DEFAULT_SUITES):
    """Runtime programs (*.cu) come twice, static and shared cudart; driver ones (*.cpp) once;
    programs of the suite folders once each."""
    suites = set(suites.split(","))
    programs = []
    for entry in sorted(os.listdir(source_dir)) if "main" in suites else []:
        stem, ext = os.path.splitext(entry)
        if ext not in (".cu", ".cpp"):
            continue
        path = os.path.join(source_dir, entry)
        expected = parse_expectations(path)
        variants = [(stem, "static"), (stem + "_shared", "shared")] if ext == ".cu" else [(stem, "none")]
        for name, cudart in variants:
            if only is None or re.search(only, name):
                programs.append(Program(name, cudart, path, expected))
    python_dir = os.path.join(source_dir, "python")
    for entry in sorted(os.listdir(python_dir)) if "python" in suites and os.path.isdir(python_dir) else []:
        stem, ext = os.path.splitext(entry)
        if ext != ".py" or stem == "common" or (only is not None and not re.search(only, stem)):
            continue
        path = os.path.join(python_dir, entry)
        programs.append(Program(stem, "python", path, parse_expectations(path)))
    for folder, suite, kinds in SUITE_FOLDERS:
        directory = os.path.join(source_dir, folder)
        if suite not in suites or not os.path.isdir(directory):
            continue
        for entry in sorted(os.listdir(directory)):
            stem, ext = os.path.splitext(entry)
            if ext not in kinds or stem in ("common", "cudart12") or (only is not None and not re.search(only, stem)):
                continue
            path = os.path.join(directory, entry)
            program = Program(stem, kinds[ext], path, parse_expectations(path))
            program.suite = suite
            programs.append(program)
    return programs


def user_location(location):
    frames = (location or {}).get("frames") or []
    index = (location or {}).get("user_frame")
    if not isinstance(index, int) or not 0 <= index < len(frames):
        return "?", 0
    frame = frames[index]
    return os.path.basename(frame.get("file") or "?"), int(frame.get("line") or 0)


def found_findings(report):
    found = collections.Counter()
    for finding in report.get("findings", []):
        file, line = user_location(finding.get("location"))
        found[(finding.get("rule", "?"), file, line)] += 1
    return found


def describe(counter, source_name):
    """rule:line when the line is in the program's own source, rule@file:line otherwise."""
    if not counter:
        return "-"
    items = []
    for (rule, file, line), count in sorted(counter.items(), key=lambda item: (item[0][2], item[0][0])):
        where = f"{line}" if file == source_name else f"{file}:{line}"
        items.extend([f"{rule}:{where}"] * count)
    return ", ".join(items)


def invoke(command, log_path, timeout, cwd=None):
    """Runs command with its output in log_path; returns (exit status or None on timeout, tail)."""
    with open(log_path, "w", encoding="utf-8") as log:
        log.write("$ " + " ".join(command) + "\n")
        log.flush()
        try:
            status = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, timeout=timeout,
                                    cwd=cwd).returncode
        except subprocess.TimeoutExpired:
            status = None
        except OSError as error:
            log.write(f"cannot run: {error}\n")
            status = None
    with open(log_path, encoding="utf-8", errors="replace") as log:
        lines = [line.strip() for line in log if line.strip()]
    return status, (lines[-1] if lines else "")


def recorded_traces(program, from_traces):
    """The folder of traces recorded for `program` under --from-traces; None when there is none."""
    for traces in (os.path.join(from_traces, "traces", program.name),
                   os.path.join(from_traces, program.name)):
        if os.path.isdir(traces):
            return traces
    return None


def rules_of(program, by_name):
    """The rules a program is about: those it expects, or for a correct twin (<name>_ok) and
    a _shared variant, those of the program it is the twin of."""
    rules = {rule for rule, _, _ in program.expected}
    base = by_name.get(re.sub(r"(_ok)?(_shared)?$", "", program.name))
    return rules or ({rule for rule, _, _ in base.expected} if base else set())


def rules_without_recording(programs, from_traces):
    """Program name -> the rules it is about that no recorded program is about: a rule that
    has no GPU recording yet (scripts/add_rule.py made it), skipped rather than failed."""
    by_name = {program.name: program for program in programs}
    recorded = set()
    for program in programs:
        if recorded_traces(program, from_traces):
            recorded |= rules_of(program, by_name)
    return {program.name: sorted(rules_of(program, by_name) - recorded) for program in programs}


def options_without_recording(programs, from_traces):
    """Program name -> its `capguard run` options (capguard-args) that no recorded program is
    run with: a feature with no GPU recording yet (capture rehearsal's --rehearse, until the
    GPU machine records its programs), skipped rather than failed."""
    def options(program):
        return {arg.split("=", 1)[0] for arg in program.run_args if arg.startswith("--")}
    recorded = set()
    for program in programs:
        if recorded_traces(program, from_traces):
            recorded |= options(program)
    return {program.name: sorted(options(program) - recorded) for program in programs}


def check(program, args, out_dir):
    """Returns (found multiset or None, exit status, list of problems)."""
    report_path = os.path.join(out_dir, program.name + ".json")
    log_path = os.path.join(out_dir, "logs", program.name + ".log")
    if os.path.exists(report_path):
        os.remove(report_path)
    if args.from_traces:
        traces = recorded_traces(program, args.from_traces)
        if traces is None:
            if program.suite in ("libs", "multi", "libtorch"):
                return None, None, [SKIP_NOT_RECORDED]
            new_options = args.unrecorded_options.get(program.name)
            if new_options:
                return None, None, [f"{SKIP_NOT_RECORDED} (no program run with {', '.join(new_options)} "
                                    "is recorded: record it on the GPU machine, testcases/README.md)"]
            new_rules = args.unrecorded_rules.get(program.name)
            if new_rules:
                return None, None, [f"{SKIP_NOT_RECORDED} (no program of rule {', '.join(new_rules)} "
                                    "is recorded: record it on the GPU machine, testcases/README.md)"]
            if program.name in args.pending:
                return None, None, [f"{SKIP_NOT_RECORDED} (awaits its recording: "
                                    f"{os.path.join(args.from_traces, PENDING)})"]
            return None, None, ["no recorded trace"]
        command = [args.capguard, "report", "--format", "json", "-o", report_path] + program.report_args() + [traces]
    else:
        if program.cudart == "python":  # run from its folder, beside common.py
            target = [args.python, os.path.basename(program.source)]
        elif program.cudart == "torchrun":  # two ranks, one process per GPU
            target = [args.python, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                      os.path.basename(program.source)]
        else:
            binary = os.path.join(args.build, "testcases", program.name)
            if not os.access(binary, os.X_OK):
                return None, None, [f"not built ({binary})"]
            target = [binary]
        traces = os.path.join(out_dir, "traces", program.name)
        shutil.rmtree(traces, ignore_errors=True)
        os.makedirs(traces)
        command = ([args.capguard, "run", "--format", "json", "-o", report_path, "--trace-dir", traces]
                   + program.run_args + ["--"] + target)
    cwd = os.path.dirname(program.source) if program.cudart in ("python", "torchrun") else None
    status, last_line = invoke(command, log_path, args.timeout, cwd)
    if status is None:
        return None, None, [f"timed out or did not start: {last_line}"]
    if status == EXIT_NOT_ATTACHED and program.expected_exit() != EXIT_NOT_ATTACHED:
        return None, status, [f"capguard could not attach (exit 3): {last_line}"]
    try:
        with open(report_path, encoding="utf-8") as file:
            report = json.load(file)
    except (OSError, ValueError) as error:
        return None, status, [f"no JSON report (exit {status}): {error}"]
    problems = []
    processes = report.get("processes", [])
    if args.from_traces is None and not any(process.get("attached") for process in processes):
        problems.append("no attached process in the report")
    if status != program.expected_exit():
        problems.append(f"exit {status}, expected {program.expected_exit()}")
    problems += rehearsal_problems(program, report)
    problems += coverage_problems(program, report)
    return found_findings(report), status, problems


def verdict(program, found, problems):
    if len(problems) == 1 and problems[0].startswith(SKIP_NOT_RECORDED):
        return "SKIP: " + problems[0]
    if found is not None:
        missing, unexpected = program.expected - found, found - program.expected
        source_name = os.path.basename(program.source)
        if missing:
            problems.insert(0, "missing " + describe(missing, source_name))
        if unexpected:
            problems.insert(1 if missing else 0, "unexpected " + describe(unexpected, source_name))
    return "PASS" if not problems else "FAIL: " + "; ".join(problems)


def print_table(rows, header=("program", "cudart", "expected", "found", "verdict")):
    widths = [max(len(str(row[i])) for row in [header] + rows) for i in range(len(header) - 1)]
    for row in [header] + rows:
        cells = [str(cell).ljust(width) for cell, width in zip(row, widths)] + [str(row[-1])]
        print(" | ".join(cells).rstrip())


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", default=here, help="testcase sources (default: beside this script)")
    parser.add_argument("--build", help="build directory whose testcases/ holds the programs")
    parser.add_argument("--capguard", help="the capguard executable")
    parser.add_argument("--out", help="reports, traces and logs go here (default: a new temporary directory)")
    parser.add_argument("--from-traces", metavar="DIR", help="re-analyze traces recorded earlier with `capguard report`")
    parser.add_argument("--only", metavar="REGEX", help="only the programs whose name matches")
    parser.add_argument("--python", default="python3", help="interpreter for python/*.py (default python3)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per program (default 120)")
    parser.add_argument("--list", action="store_true", help="print the expectations parsed from the sources")
    parser.add_argument("--suites", help=f"comma-separated: which programs (default {DEFAULT_SUITES}; "
                        f"with --from-traces {RECORDED_SUITES})")
    args = parser.parse_args()

    try:
        suites = args.suites or (RECORDED_SUITES if args.from_traces else DEFAULT_SUITES)
        programs = discover(args.source, args.only, suites)
    except (OSError, ValueError) as error:
        print(f"check_expectations: {error}", file=sys.stderr)
        return 2
    if args.list:
        rows = [(p.name, p.cudart, p.expected_exit(), describe(p.expected, os.path.basename(p.source))) for p in programs]
        print_table(rows, header=("program", "cudart", "exit", "expected"))
        return 0
    if not args.capguard or (args.from_traces is None and not args.build):
        parser.error("--capguard and either --build or --from-traces are required (or --list)")
    if not programs:
        print("check_expectations: no testcase program matched", file=sys.stderr)
        return 2

    # Python programs run from testcases/python: every path given must survive the chdir.
    args.capguard = os.path.abspath(args.capguard) if os.sep in args.capguard else args.capguard
    if args.from_traces:
        args.from_traces = os.path.abspath(args.from_traces)
        args.pending = pending_programs(args.from_traces)
        args.unrecorded_rules = rules_without_recording(programs, args.from_traces)
        args.unrecorded_options = options_without_recording(programs, args.from_traces)
    if args.build:
        args.build = os.path.abspath(args.build)
    out_dir = os.path.abspath(args.out or tempfile.mkdtemp(prefix="capguard-testcases-"))
    os.makedirs(os.path.join(out_dir, "logs"), exist_ok=True)
    rows, results = [], []
    for program in programs:
        found, status, problems = check(program, args, out_dir)
        source_name = os.path.basename(program.source)
        text = verdict(program, found, problems)
        found_text = "?" if found is None else describe(found, source_name)
        rows.append((program.name, program.cudart, describe(program.expected, source_name), found_text, text))
        results.append({"program": program.name, "cudart": program.cudart, "source": source_name,
                        "exit": status, "expected_exit": program.expected_exit(),
                        "expected": sorted(map(list, program.expected.elements())),
                        "found": None if found is None else sorted(map(list, found.elements())),
                        "verdict": text})
    with open(os.path.join(out_dir, "results.json"), "w", encoding="utf-8") as file:
        json.dump(results, file, indent=1)
    skipped = sum(1 for row in rows if row[-1].startswith("SKIP"))
    failures = sum(1 for row in rows if row[-1] != "PASS" and not row[-1].startswith("SKIP"))
    print(f"reports, traces and logs: {out_dir}")
    print_table(rows)
    passed = len(rows) - failures - skipped
    print(f"{passed} passed, {failures} failed, {skipped} skipped, {len(rows)} programs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
