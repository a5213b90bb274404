#!/usr/bin/env python3
"""Renders every recorded testcase trace as HTML and DOT with `capguard report` and checks the
documents against the JSON report of the same trace: the HTML page is self-contained (no
scripts, nothing fetched), has one finding article per finding (same rule, same capture) and one
picture per capture (lanes, begin mark, the culprit marked), and the DOT output has one digraph
per finding that concerns a capture (which Graphviz's dot accepts, where it is installed).

    validate_html_report.py CAPGUARD RECORDED_TRACES_DIR
"""
import json
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.findings = []        # (rule, capture or None)
        self.figures = {}         # capture id -> {"lanes": n, "marks": set of point kinds}
        self.external = []        # anything that would be fetched or run
        self._figure = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script" or any(k.startswith("on") for k in a):
            self.external.append(f"<{tag}> script")
        for key in ("src", "href"):
            value = a.get(key) or ""
            if value and not value.startswith("#") and key != "xmlns":
                self.external.append(f"<{tag} {key}={value}>")
        if tag == "article" and "finding" in a.get("class", ""):
            self.findings.append((a.get("data-rule"), a.get("data-capture")))
        if tag == "figure" and a.get("class") == "capture":
            self._figure = self.figures.setdefault(a["data-capture"], {"lanes": 0, "marks": set()})
        if self._figure is not None:
            classes = a.get("class", "").split()
            if tag == "line" and "lane" in classes:
                self._figure["lanes"] += 1
            if "point" in classes:
                self._figure["marks"].update(c for c in classes if c != "point")

    def handle_endtag(self, tag):
        if tag == "figure":
            self._figure = None


def report(capguard, traces, fmt):
    proc = subprocess.run([capguard, "report", "--fail-on", "never", "--format", fmt, "-o", "-",
                           "-q", traces], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"capguard report --format {fmt} {traces}: exit {proc.returncode}")
    return proc.stdout


def check(capguard, traces):
    problems = []
    data = json.loads(report(capguard, traces, "json"))
    page = Page()
    page.feed(report(capguard, traces, "html"))
    problems += [f"external resource {e}" for e in page.external]
    # HTML prints identical findings (one JSON "group") once, with "and N more times".
    expected, groups = [], set()
    for f in data["findings"]:
        group = f.get("group")
        if group is not None and group in groups:
            continue
        groups.add(group)
        expected.append((f["rule"], None if f["capture"] is None else str(f["capture"])))
    if page.findings != expected:
        problems.append(f"findings {page.findings} != {expected}")
    for capture in data["captures"]:
        figure = page.figures.get(str(capture["id"]))
        if figure is None:
            problems.append(f"capture #{capture['id']} has no picture")
            continue
        if figure["lanes"] < 1 or not figure["marks"] & {"begin", "culprit"}:
            problems.append(f"capture #{capture['id']} picture lacks lanes or its begin: {figure}")
    for finding in data["findings"]:
        capture = finding["capture"]
        if capture is not None and str(capture) in page.figures:
            marks = page.figures[str(capture)]["marks"]
            if not marks & {"culprit", "outside"}:
                problems.append(f"{finding['rule']}: culprit not marked in capture #{capture}")
    dot = report(capguard, traces, "dot")
    graphs = sum(1 for f in data["findings"] if f["capture"] is not None)
    if dot.count("digraph ") != graphs:
        problems.append(f"{dot.count('digraph ')} DOT graphs, expected {graphs}")
    if graphs and shutil.which("dot"):  # Graphviz, where installed, must accept it
        proc = subprocess.run(["dot", "-Tsvg", "-o", os.devnull], input=dot, capture_output=True,
                              text=True)
        if proc.returncode != 0:
            problems.append(f"dot -Tsvg: {proc.stderr.strip()}")
    return problems


def main():
    capguard, root = sys.argv[1], sys.argv[2]
    failed = 0
    for program in sorted(os.listdir(root)):
        problems = check(capguard, os.path.join(root, program))
        for p in problems:
            print(f"FAIL {program}: {p}")
        failed += bool(problems)
    print(f"{len(os.listdir(root)) - failed} of {len(os.listdir(root))} HTML/DOT reports ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
