#!/usr/bin/env python3
"""rules/rules.def, the one list of rules, is what the rest says: `capguard rules` lists its rows
(id, severity, summary) in its order, the rule tables of README.md and docs/rules.md are the
ones generated from it (scripts/add_rule.py --tables writes them), so a row missing from the
docs fails here, each rule option row is in docs/rules.md and in `capguard explain RULE`, and
testcases/check_expectations.py reads its severities from it. The order is the documented priority: errors, then the capture-invalidated
fallback, then warnings, then notes.

    rule_lists_test.py CAPGUARD SOURCE_DIR
"""
import importlib.util
import os
import re
import subprocess
import sys

FALLBACK = "capture-invalidated"
RANK = {"error": 0, "warning": 2, "note": 3}


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def priority_problems(rows):
    """Out-of-order rows: each row's rank (the fallback ranks between errors and warnings)."""
    ranks = [1 if r.id == FALLBACK else RANK[r.severity] for r in rows]
    problems = [f"rules.def: {rows[i].id} ({rows[i].severity}) sorts after {rows[i - 1].id} "
                f"({rows[i - 1].severity})" for i in range(1, len(rows)) if ranks[i] < ranks[i - 1]]
    if FALLBACK not in [r.id for r in rows]:
        problems.append(f"rules.def has no {FALLBACK} row")
    return problems


def main():
    capguard, source = sys.argv[1], sys.argv[2]
    rule_rows = load(os.path.join(source, "scripts", "rule_rows.py"), "rule_rows")
    rows = rule_rows.rows(source)
    problems = []
    if len(rows) < 10:
        problems.append(f"rules.def: only {len(rows)} rows were read")
    problems += priority_problems(rows)
    # The self-check of the order check: a note before an error is caught.
    if not priority_problems([rule_rows.Row("kA", "a-note", "note", ""),
                              rule_rows.Row("kB", FALLBACK, "error", "")]):
        problems.append("the priority check accepts a note before an error")

    out = subprocess.run([capguard, "rules"], check=True, capture_output=True, text=True).stdout
    listed = [m.groups() for m in (re.match(r"^([a-z][a-z0-9-]+)\s+(error|warning|note)\s+(.*)$",
                                            line) for line in out.splitlines()) if m]
    expected = [(r.id, r.severity, r.summary) for r in rows]
    if listed != expected:
        problems.append(f"`capguard rules` lists {listed}, rules.def says {expected}")

    with open(os.path.join(source, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    if rule_rows.readme_table(rows) not in readme:
        problems.append("README.md's rule table is not the one rules.def makes: run "
                        "scripts/add_rule.py --tables")
    options = rule_rows.options(source)
    if len(options) < 2 or any(o.rule.startswith("k") for o in options):
        problems.append(f"rules.def: the option rows read as {options}")
    with open(os.path.join(source, rule_rows.DOCS), encoding="utf-8") as f:
        docs = f.read()
    if rule_rows.docs_tables(rows, options) not in docs:
        problems.append(f"{rule_rows.DOCS}'s tables are not the ones rules.def makes: run "
                        "scripts/add_rule.py --tables")
    for row in rows:  # said apart from the whole table, so that the message names the row
        if f"| `{row.id}` | {row.severity} |" not in docs:
            problems.append(f"{rule_rows.DOCS} lacks the row of {row.id}")
    for option in options:
        if f"| `{option.rule}.{option.name}` | {option.default} |" not in docs:
            problems.append(f"{rule_rows.DOCS} lacks the option {option.rule}.{option.name}")
        explained = subprocess.run([capguard, "explain", option.rule], check=True,
                                   capture_output=True, text=True).stdout
        if f"  {option.name} = {option.default}: {option.meaning}" not in explained:
            problems.append(f"`capguard explain {option.rule}` does not list {option.name} = "
                            f"{option.default} as rules.def says")

    checker = load(os.path.join(source, "testcases", "check_expectations.py"), "check_expectations")
    if checker.SEVERITY != {r.id: r.severity for r in rows}:
        problems.append("check_expectations.py's SEVERITY is not rules.def's")

    for problem in problems:
        print("rule_lists:", problem)
    print(f"rule_lists: {len(rows)} rules, {len(options)} options, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
