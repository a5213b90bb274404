#!/usr/bin/env python3
"""Checks the GitHub Actions example (docs/github-actions-capguard.yml) the way GitHub would take it
when pasted: trigger events, minimal permissions, actions at current major versions, the SARIF
upload with a category, and the capguard step's command line, which is run here with the built
capguard (no GPU: `run` must get past option parsing and fail closed with 3, writing its reports)
with and without a suppressions file in the repository.

Then it mutates the workflow in the ways the README's old example was broken and checks that each
mutation is caught, so this test can fail.

Usage: validate_workflow.py WORKFLOW.yml PATH/TO/capguard
"""

import copy
import os
import re
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("FAIL: PyYAML is missing (apt-get install python3-yaml; scripts/setup.sh installs it)")
    sys.exit(1)

# The oldest major version of each action that is not deprecated (Node 20 runtimes, CodeQL v3).
MINIMUM_MAJOR = {
    "actions/checkout": 4,
    "github/codeql-action/upload-sarif": 3,
    "actions/upload-artifact": 4,
    "actions/download-artifact": 4,
    "actions/setup-python": 5,
    "actions/cache": 4,
}
USES = re.compile(r"^(?P<action>[\w.-]+/[\w.-]+(?:/[\w./-]+)?)@v(?P<major>\d+)(?:\.\d+)*$")
EVENTS = {"push", "pull_request", "pull_request_target", "workflow_dispatch", "schedule",
          "merge_group", "workflow_call", "release"}
# The only write scope the job needs; everything else may be read or none.
ALLOWED_WRITE = {"security-events"}


def triggers(workflow):
    # YAML 1.1 (PyYAML) reads the bare key `on` as the boolean true.
    if "on" in workflow:
        return workflow["on"]
    return workflow.get(True)


def effective_permissions(workflow, job):
    return job.get("permissions", workflow.get("permissions"))


def check_structure(workflow):
    """The problems GitHub or a reviewer would find in the file itself."""
    problems = []
    if not isinstance(workflow, dict):
        return ["not a mapping at the top level"]
    on = triggers(workflow)
    if not on:
        problems.append("no `on:` events: GitHub never runs the workflow")
    else:
        names = [on] if isinstance(on, str) else list(on)
        unknown = [n for n in names if n not in EVENTS]
        if unknown:
            problems.append(f"unknown events in `on:`: {unknown}")
    top = workflow.get("permissions")
    if not isinstance(top, dict):
        problems.append("no top-level `permissions:` mapping (the token would get the repository's"
                        " default, often write-all)")
    jobs = workflow.get("jobs")
    if not isinstance(jobs, dict) or not jobs:
        return problems + ["no jobs"]
    sarif_uploads = 0
    for name, job in jobs.items():
        if not isinstance(job, dict):
            problems.append(f"job {name}: not a mapping")
            continue
        if "runs-on" not in job:
            problems.append(f"job {name}: no runs-on")
        steps = job.get("steps")
        if not isinstance(steps, list) or not steps:
            problems.append(f"job {name}: no steps")
            continue
        perms = effective_permissions(workflow, job)
        if not isinstance(perms, dict):
            problems.append(f"job {name}: permissions {perms!r} are not an explicit mapping")
            perms = {}
        for scope, level in perms.items():
            if level not in ("read", "write", "none"):
                problems.append(f"job {name}: permission {scope}: {level!r}")
            if level == "write" and scope not in ALLOWED_WRITE:
                problems.append(f"job {name}: {scope}: write is more than the job needs")
        if perms.get("contents") != "read":
            problems.append(f"job {name}: needs contents: read (checkout)")
        for index, step in enumerate(steps):
            where = f"job {name}, step {index + 1} ({step.get('name') or step.get('uses') or 'run'})"
            if not isinstance(step, dict) or ("uses" in step) == ("run" in step):
                problems.append(f"{where}: a step has exactly one of uses/run")
                continue
            if "uses" not in step:
                continue
            match = USES.match(step["uses"])
            if not match:
                problems.append(f"{where}: `{step['uses']}` is not pinned to a major version (@vN)")
                continue
            action, major = match["action"], int(match["major"])
            if action in MINIMUM_MAJOR and major < MINIMUM_MAJOR[action]:
                problems.append(f"{where}: {action}@v{major} is deprecated; use "
                                f"@v{MINIMUM_MAJOR[action]}")
            if action == "github/codeql-action/upload-sarif":
                sarif_uploads += 1
                with_ = step.get("with") or {}
                if not with_.get("sarif_file"):
                    problems.append(f"{where}: no sarif_file")
                if not with_.get("category"):
                    problems.append(f"{where}: no category (uploads from other tools or jobs "
                                    "would replace each other's alerts)")
                if perms.get("security-events") != "write":
                    problems.append(f"{where}: the job lacks security-events: write")
    if sarif_uploads == 0:
        problems.append("no github/codeql-action/upload-sarif step")
    return problems


def capguard_steps(workflow):
    for name, job in (workflow.get("jobs") or {}).items():
        for step in job.get("steps") or []:
            if isinstance(step, dict) and re.search(r"\$CAPGUARD\b|\bcapguard (run|report)\b",
                                                    str(step.get("run", ""))):
                yield name, job, step


def run_step(job, step, capguard, suppressions):
    """Runs a capguard step's script the way GitHub's bash shell does, with the job's env but
    the built capguard and /bin/true as the program, in a scratch repository whose
    .capguard.supp is absent (None), valid ("valid") or names an unknown rule ("broken").
    Returns a problem or None."""
    with tempfile.TemporaryDirectory() as repo:
        if suppressions:
            with open(os.path.join(repo, ".capguard.supp"), "w") as f:
                rule = "unjoined-fork" if suppressions == "valid" else "no-such-rule"
                f.write(f"# nothing suppressed yet\n{rule}:fun:never_called_anywhere\n")
        env = dict(os.environ)
        env.update({k: str(v) for k, v in (job.get("env") or {}).items()})
        env["CAPGUARD"] = capguard
        env["APP_TESTS"] = "/bin/true"
        if "${{" in step["run"]:
            return "the capguard step's script uses ${{ }} expressions (pass values through env)"
        shell = step.get("shell", "bash")
        if shell != "bash":
            return f"the capguard step runs under `{shell}`, expected bash"
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                               step["run"]], cwd=repo, env=env, capture_output=True, text=True,
                              timeout=120)
        label = f"with a {suppressions} .capguard.supp" if suppressions else "without .capguard.supp"
        if suppressions == "broken":
            # The file must reach capguard: an unknown rule in it is a usage error (2).
            if done.returncode != 2 or "no-such-rule" not in done.stderr:
                return (f"{label}: exit {done.returncode}, expected 2 naming no-such-rule (the "
                        f"file is not passed to capguard?); stderr:\n{done.stderr}")
            return None
        # 3: capguard parsed its options, started the program and failed closed (no GPU here, or
        # /bin/true never reaching CUDA). 2 would be a usage error in the command line.
        if done.returncode != 3:
            return (f"{label}: exit {done.returncode}, expected 3 (options accepted, "
                    f"could not attach); stderr:\n{done.stderr}")
        for report in ("capguard.sarif", "capguard.xml", "capguard.json"):
            if os.path.exists(os.path.join(repo, report)):
                continue
            if re.search(rf"\b{re.escape(report)}\b", step["run"]):
                return f"{label}: {report} was not written"
    return None


def check_commands(workflow, capguard):
    steps = list(capguard_steps(workflow))
    if not steps:
        return ["no step runs capguard"]
    problems = []
    for name, job, step in steps:
        for suppressions in (None, "valid", "broken"):
            problem = run_step(job, step, capguard, suppressions)
            if problem:
                problems.append(f"job {name}, step {step.get('name', 'run')}: {problem}")
    return problems


def check(workflow, capguard):
    return check_structure(workflow) + check_commands(workflow, capguard)


def mutations(workflow):
    """The ways the README's old example was broken, each of which must be caught."""
    def mutate(description, change, expected):
        copy_ = copy.deepcopy(workflow)
        change(copy_)
        return description, copy_, expected

    def steps(w):
        return [s for job in w["jobs"].values() for s in job["steps"]]

    def drop_on(w):
        w.pop("on", None)
        w.pop(True, None)

    def old_sarif(w):
        for s in steps(w):
            if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@"):
                s["uses"] = "github/codeql-action/upload-sarif@v2"

    def no_category(w):
        for s in steps(w):
            if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@"):
                s["with"].pop("category", None)

    def unconditional_suppressions(w):
        for _, _, s in capguard_steps(w):
            s["run"] = '"$CAPGUARD" run --fail-on error --suppressions .capguard.supp ' \
                       "-o sarif:capguard.sarif -- $APP_TESTS\n"

    def no_permissions(w):
        w.pop("permissions", None)
        for job in w["jobs"].values():
            job.pop("permissions", None)

    def write_all(w):
        for job in w["jobs"].values():
            job["permissions"] = dict(job.get("permissions") or {}, contents="write")

    def ignored_suppressions(w):
        for _, _, s in capguard_steps(w):
            s["run"] = s["run"].replace('"${suppressions[@]}"', "")

    def bad_option(w):
        for _, _, s in capguard_steps(w):
            s["run"] = s["run"].replace("--fail-on error", "--fail-on errors")

    # Each with the words of the problem it must produce (not just any problem).
    yield mutate("no `on:`", drop_on, "no `on:` events")
    yield mutate("upload-sarif@v2", old_sarif, "upload-sarif@v2 is deprecated")
    yield mutate("no SARIF category", no_category, "no category")
    yield mutate("--suppressions without the file", unconditional_suppressions,
                 "without .capguard.supp: exit 2,")
    yield mutate("the suppressions file never passed", ignored_suppressions,
                 "with a broken .capguard.supp: exit 3")
    yield mutate("no permissions", no_permissions, "no top-level `permissions:`")
    yield mutate("contents: write", write_all, "contents: write is more than")
    yield mutate("a misspelt capguard option", bad_option, "exit 2,")


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    path, capguard = sys.argv[1], os.path.abspath(sys.argv[2])
    with open(path) as f:
        workflow = yaml.safe_load(f)
    failures = 0
    problems = check(workflow, capguard)
    for problem in problems:
        print(f"FAIL: {path}: {problem}")
    failures += len(problems)
    if not problems:
        print(f"ok: {path}: structure, permissions, action versions, capguard command lines")
    for description, mutated, expected in mutations(workflow):
        caught = [p for p in check(mutated, capguard) if expected in p]
        if caught:
            print(f"ok: a workflow with {description} is rejected: {caught[0].splitlines()[0]}")
        else:
            print(f"FAIL: a workflow with {description} is not rejected for it ({expected!r})")
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
