#!/usr/bin/env python3
"""Validates SARIF logs against the official SARIF 2.1.0 JSON schema (docs/) and against what
GitHub code scanning additionally requires of an upload.

usage: validate_sarif.py SCHEMA SARIF...

Exit 0 when every file is valid, 1 when one is not, 77 (ctest SKIP_RETURN_CODE) when the
jsonschema module is missing: install Debian's python3-jsonschema (scripts/setup.sh does)."""
import copy
import json
import re
import sys

SKIP = 77
FINGERPRINT_KEY = "capguardFingerprint/v1"


def github_problems(log):
    """What GitHub rejects or mis-shows although the schema allows it."""
    problems = []
    for r, run in enumerate(log.get("runs") or []):
        rules = run["tool"]["driver"].get("rules", [])
        ids = [rule["id"] for rule in rules]
        if len(ids) != len(set(ids)):
            problems.append(f"runs[{r}]: duplicate rule ids")
        for i, result in enumerate(run.get("results") or []):
            where = f"runs[{r}].results[{i}] ({result.get('ruleId')})"
            locations = result.get("locations") or []
            if not locations:
                problems.append(f"{where}: no location (GitHub rejects the whole upload)")
            for location in locations + result.get("relatedLocations", []):
                uri = location.get("physicalLocation", {}).get("artifactLocation", {}).get("uri")
                if not uri:
                    problems.append(f"{where}: a location without physicalLocation.artifactLocation.uri")
            if "ruleIndex" in result and ids[result["ruleIndex"]] != result.get("ruleId"):
                problems.append(f"{where}: ruleIndex names rule {ids[result['ruleIndex']]}")
            if result.get("ruleId") not in ids:
                problems.append(f"{where}: ruleId is not among the driver's rules")
            if not result.get("partialFingerprints", {}).get(FINGERPRINT_KEY):
                problems.append(f"{where}: no partialFingerprints[{FINGERPRINT_KEY!r}]")
            related_ids = [loc.get("id") for loc in result.get("relatedLocations", [])]
            if len(related_ids) != len(set(related_ids)):
                problems.append(f"{where}: duplicate related location ids")
            for link in re.findall(r"\]\((\d+)\)", result["message"].get("text", "")):
                if int(link) not in related_ids:
                    problems.append(f"{where}: message links to missing related location {link}")
    return problems


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import jsonschema
    except ImportError:
        print("SKIP: python3 module 'jsonschema' is not installed (apt-get install "
              "python3-jsonschema); SARIF schema validation not run")
        return SKIP
    with open(argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft4Validator.check_schema(schema)
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())

    failed = False
    logs = []
    for path in argv[2:]:
        with open(path, encoding="utf-8") as f:
            log = json.load(f)
        logs.append(log)
        problems = [f"schema: {'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
                    for e in validator.iter_errors(log)]
        problems += github_problems(log)
        for p in problems:
            print(f"{path}: {p}")
        failed |= bool(problems)
        if not problems:
            results = sum(len(run.get("results") or []) for run in log["runs"])
            print(f"{path}: valid SARIF 2.1.0 ({results} results)")

    # The check must be able to fail: broken copies of a real log have to be rejected.
    sample = next((log for log in logs if log["runs"][0].get("results")), None)
    if sample is not None:
        no_message = copy.deepcopy(sample)
        del no_message["runs"][0]["results"][0]["message"]
        bad_level = copy.deepcopy(sample)
        bad_level["runs"][0]["results"][0]["level"] = "fatal"
        no_location = copy.deepcopy(sample)
        no_location["runs"][0]["results"][0]["locations"] = []
        if validator.is_valid(no_message) or validator.is_valid(bad_level):
            print("self-check: the schema accepted a broken log; validation is not effective")
            failed = True
        if not github_problems(no_location):
            print("self-check: a result without a location passed the GitHub checks")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
