#!/usr/bin/env python3
"""The rule ids and severities written outside the rule table agree with `capguard rules`: the
README's rule table and testcases/check_expectations.py's SEVERITY. (Until they are generated
from one list, this keeps the copies in step.)

    rule_lists_test.py CAPGUARD SOURCE_DIR
"""
import importlib.util
import os
import re
import subprocess
import sys


def main():
    capguard, source = sys.argv[1], sys.argv[2]
    out = subprocess.run([capguard, "rules"], check=True, capture_output=True, text=True).stdout
    table = {}
    for line in out.splitlines():
        match = re.match(r"^([a-z][a-z-]+)\s+(error|warning|note)\s", line)
        if match:
            table[match.group(1)] = match.group(2)
    problems = []
    if len(table) < 10:
        problems.append(f"`capguard rules` listed only {len(table)} rules")

    with open(os.path.join(source, "README.md"), encoding="utf-8") as readme:
        rows = dict(re.findall(r"^\| `([a-z-]+)` \| (error|warning|note) \|", readme.read(), re.M))
    spec = importlib.util.spec_from_file_location(
        "check_expectations", os.path.join(source, "testcases", "check_expectations.py"))
    checker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(checker)

    for name, copy in (("README.md's rule table", rows), ("check_expectations.py", checker.SEVERITY)):
        for rule, severity in table.items():
            if rule not in copy:
                problems.append(f"{name} has no row for {rule}")
            elif copy[rule] != severity:
                problems.append(f"{name} says {rule} is a {copy[rule]}, the table says {severity}")
        for rule in copy:
            if rule not in table:
                problems.append(f"{name} names {rule}, which `capguard rules` does not list")
    for problem in problems:
        print("rule_lists:", problem)
    print(f"rule_lists: {len(table)} rules, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
