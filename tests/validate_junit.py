#!/usr/bin/env python3
"""Checks JUnit XML the way CI test reporters read it (Jenkins, GitLab, GitHub actions): it
parses; <testsuites> holds <testsuite>s holding <testcase>s with name and classname; every
tests/failures/errors count equals what the elements say; a testcase has at most one
<failure> and one <error>.

usage: validate_junit.py JUNIT_XML..."""
import copy
import sys
import xml.etree.ElementTree as ET


def problems_of(root):
    problems = []
    if root.tag != "testsuites":
        return [f"root element is <{root.tag}>, not <testsuites>"]
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for s, suite in enumerate(root):
        where = f"testsuite[{s}] {suite.get('name')!r}"
        if suite.tag != "testsuite":
            problems.append(f"<{suite.tag}> inside <testsuites>")
            continue
        if not suite.get("name"):
            problems.append(f"{where}: no name")
        cases = suite.findall("testcase")
        counted = {
            "tests": len(cases),
            "failures": sum(1 for c in cases if c.find("failure") is not None),
            "errors": sum(1 for c in cases if c.find("error") is not None),
        }
        for key, value in counted.items():
            if suite.get(key) != str(value):
                problems.append(f"{where}: {key}={suite.get(key)!r} but it has {value}")
            totals[key] += value
        for c, case in enumerate(cases):
            if not case.get("name") or not case.get("classname"):
                problems.append(f"{where} testcase[{c}]: needs name and classname")
            for tag in ("failure", "error"):
                found = case.findall(tag)
                if len(found) > 1:
                    problems.append(f"{where} testcase[{c}]: {len(found)} <{tag}> elements")
                for element in found:
                    if not element.get("message") or not element.get("type"):
                        problems.append(f"{where} testcase[{c}]: <{tag}> without message/type")
    for key, value in totals.items():
        if root.get(key) != str(value):
            problems.append(f"testsuites: {key}={root.get(key)!r} but the suites have {value}")
    return problems


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    failed = False
    sample = None
    for path in argv[1:]:
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as e:
            print(f"{path}: not well-formed XML: {e}")
            failed = True
            continue
        problems = problems_of(root)
        for p in problems:
            print(f"{path}: {p}")
        failed |= bool(problems)
        if not problems:
            print(f"{path}: valid JUnit ({root.get('tests')} tests, {root.get('failures')} "
                  f"failures, {root.get('errors')} errors)")
        if len(root) and sample is None:
            sample = root
    # The check must be able to fail: a miscounted copy has to be caught.
    if sample is not None:
        broken = copy.deepcopy(sample)
        suite = broken[0]
        actual = sum(1 for c in suite.findall("testcase") if c.find("failure") is not None)
        suite.set("failures", str(actual + 1))
        if not problems_of(broken):
            print("self-check: a miscounted testsuite passed; the check is not effective")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
