#!/usr/bin/env python3
"""Every Python recorded report reads in the framework's language: the golden text
reports of the torch_, cupy_, jax_ and triton_ programs (testcases/recorded/golden/), and the
same reports made again from their traces by this capguard, are checked for what a Python user
reads first:

- each finding's first stack line is a user's file and line ("#0 file.py:N in function"), or the
  finding names the thread and leads with the user line that started its work;
- no Python frame line has an address or "(python)"; numbering starts at the user's frame;
- no fold names nothing ("→  (14 frames)", "→ : launch");
- no line is over 120 columns (but the SUMMARY line, which CI jobs grep whole);
- every finding gives a fix, and none says "eagerly" or "cudaGraphExecUpdate" to a Python user.

    python_reports_test.py CAPGUARD SOURCE_DIR
"""
import os
import re
import subprocess
import sys

MAX_COLUMNS = 120
PREFIXES = ("torch_", "cupy_", "jax_", "triton_")
HEADING = re.compile(r"^==\d+==(ERROR|WARNING|NOTE): capguard: ")


def findings(text):
    """The findings' blocks: from a heading to the blank line that ends it."""
    blocks, current = [], None
    for line in text.splitlines():
        if HEADING.match(line):
            current = [line]
            blocks.append(current)
        elif current is not None:
            if not line:
                current = None
            else:
                current.append(line)
    return blocks


def problems_of(name, text):
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        # The SUMMARY line stays one line whatever its length: CI jobs grep it.
        if len(line) > MAX_COLUMNS and not line.startswith("SUMMARY: "):
            problems.append(f"{name}:{number}: {len(line)} columns")
        if re.search(r"#\d+ 0x0 in |\(python\)$", line):
            problems.append(f"{name}:{number}: a Python frame with an address: {line.strip()}")
        if re.search(r"→ +\(\d+ frames?\)|→ : |→ *$", line):
            problems.append(f"{name}:{number}: a fold without a name: {line.strip()}")
    for block in findings(text):
        heading = block[0]
        starts = [i for i, line in enumerate(block) if re.match(r"^  called (here|on)\b", line)]
        if not starts:
            problems.append(f"{name}: {heading}: no 'called here' line")
            continue
        first = block[starts[0] + 1] if starts[0] + 1 < len(block) else ""
        if not re.match(r"^    #0 \S+\.py:\d+ in ", first):
            problems.append(f"{name}: {heading}: the first stack line is not the user's: {first!r}")
        if not any(line.startswith("  fix: ") for line in block):
            problems.append(f"{name}: {heading}: no fix")
        for line in block:
            if line.startswith("  fix: ") and re.search(r"eagerly|cudaGraphExecUpdate", line):
                problems.append(f"{name}: {heading}: a fix in CUDA's or the wrong words: {line}")
    return problems


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    capguard, source = sys.argv[1], sys.argv[2]
    recorded = os.path.join(source, "testcases", "recorded")
    programs = sorted(p for p in os.listdir(os.path.join(recorded, "traces")) if p.startswith(PREFIXES))
    problems = []
    checked = 0
    for program in programs:
        golden = os.path.join(recorded, "golden", program + ".txt")
        if os.path.exists(golden):
            with open(golden, encoding="utf-8") as f:
                problems += problems_of(f"golden/{program}.txt", f.read())
        out = subprocess.run([capguard, "report", "--fail-on", "never", "-q", "--no-source",
                              "--symbol-cache", "off", os.path.join(recorded, "traces", program)],
                             capture_output=True, text=True, check=True).stdout
        problems += problems_of(program, out)
        checked += 1
    # The checker's own check: a report as it read before the framework's words fails it.
    old = ("==1==ERROR: capguard: sync-during-capture\n  called here on thread 1:\n"
           "    #18 0x0 in <module> /w/t.py:23 (python)\n      which called torch: linear →  (14 frames)\n"
           "  fix: call the compiled function eagerly\n")
    if len(problems_of("self-check", old)) < 4:
        problems.append("the checker accepts a report in CUDA's words")
    if checked < 10:
        problems.append(f"only {checked} Python recorded programs found")
    for problem in problems:
        print("FAIL:", problem)
    print("python_reports:", "FAILED" if problems else f"ok ({checked} programs)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
