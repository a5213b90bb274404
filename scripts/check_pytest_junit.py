#!/usr/bin/env python3
"""Checks capguard's JUnit report of a pytest run under the pytest plugin: the failing test's
case carries a <failure> of RULE, the clean test's case carries nothing (no failure, error or
notes). Test cases are matched by their test function's name (the node id's last `::` part).
Prints one PASS or FAIL line per check (and an INFO line on the case of findings outside any
test, which is not judged); exits 1 when a check fails, 2 on bad usage.

  check_pytest_junit.py JUNIT FAILING_TEST RULE CLEAN_TEST
  e.g. check_pytest_junit.py out/pytest.junit.xml test_item_in_capture sync-during-capture \
           test_clean_capture

Used by scripts/gpu_pytest_check.sh; tests/check_pytest_junit_test.py checks it without a GPU."""

import sys
import xml.etree.ElementTree as ET


def cases_named(root, test):
    """The <testcase>s whose name is TEST or ends in ::TEST (a pytest node id)."""
    return [case for case in root.iter("testcase")
            if case.get("name") == test or case.get("name", "").endswith("::" + test)]


def carries_rule(case, rule):
    """Whether the case's <failure> names RULE: its type (the root cause's rule), its message
    (`rule: message`), or, behind another root cause, the body (every finding's text report)."""
    for failure in case.findall("failure"):
        if failure.get("type") == rule or (failure.get("message") or "").startswith(rule + ":"):
            return True
        if "[%s]" % rule in (failure.text or ""):
            return True
    return False


def check(junit, failing, rule, clean):
    """(ok, message) per check, in order; ok None: told, not judged."""
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError) as exc:
        return [(False, "%s is no JUnit XML: %s" % (junit, exc))]
    results = []
    bad = cases_named(root, failing)
    results.append((len(bad) == 1, "one test case for %s (found %d)" % (failing, len(bad))))
    if len(bad) == 1:
        failure = bad[0].find("failure")
        said = " (no <failure>)" if failure is None else " (its failure: %s)" % failure.get("type")
        results.append((carries_rule(bad[0], rule),
                        "%s fails with %s%s" % (bad[0].get("name"), rule, said)))
    good = cases_named(root, clean)
    results.append((len(good) == 1, "one test case for %s (found %d)" % (clean, len(good))))
    if len(good) == 1:
        children = sorted({child.tag for child in good[0]})
        results.append((not children, "%s carries no finding%s" % (
            good[0].get("name"), " (it has: %s)" % ", ".join(children) if children else "")))
    for case in cases_named(root, "outside any test"):  # told, not judged
        children = sorted({child.tag for child in case})
        results.append((None, "the case outside any test carries %s" % (", ".join(children) or "nothing")))
    return results


def main(argv):
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    results = check(*argv[1:])
    for ok, message in results:
        print("%s: junit: %s" % ({True: "PASS", False: "FAIL", None: "INFO"}[ok], message))
    return 1 if any(ok is False for ok, _ in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
