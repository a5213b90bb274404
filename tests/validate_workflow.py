#!/usr/bin/env python3
"""Checks the CI examples as a user would paste them: the GitHub Actions workflow
(docs/github-actions-capguard.yml) and the GitLab CI job (docs/gitlab-ci-capguard.yml).

For each: the CI system's own schema (check-jsonschema's vendored schemas, offline); for the
workflow also zizmor (offline) with no finding above low, every action pinned to a commit we
verified for the tag its comment names, credentials not persisted, minimal permissions. Then
the capguard lines run here, as the CI shell would run them: the install lines in a fresh venv
from the wheel (PIP_NO_INDEX: the wheel stands for the package on PyPI), checking what pip
installed and which capguard runs; then the capguard step with a stand-in test program, with and
without a suppressions file. Without a GPU `--fail-fast` must stop before the program starts
(exit 3, the preflight line first, every report written); with one, the program runs and never
reaches CUDA (exit 3).

Then it mutates the files in the ways earlier examples were broken and checks that each mutation
is caught, so this test can fail. A missing tool (check-jsonschema, zizmor, the wheel) skips its
part with a printed reason, and the test then exits 77 (skipped) if nothing failed.

Usage: validate_workflow.py GITHUB.yml GITLAB.yml CAPGUARD TOOLS_DIR [WHEEL_DIR]
  CAPGUARD: the built capguard (libcapguard.so beside it), used when there is no wheel;
  TOOLS_DIR: where check-jsonschema and zizmor are (scripts/test.sh installs them);
  WHEEL_DIR: a directory holding the built capguard_cuda wheel (the python_wheel test's)."""

import copy
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("FAIL: PyYAML is missing (apt-get install python3-yaml; scripts/setup.sh installs it)")
    sys.exit(1)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The commits the example pins, each read from the action's repository at the tag named beside
# it (git rev-parse TAG^{commit}). A pin not listed here is not accepted until it is checked.
PINS = {
    "actions/checkout": ("3d3c42e5aac5ba805825da76410c181273ba90b1", "v7.0.1"),
    "github/codeql-action/upload-sarif": ("8aad20d150bbac5944a9f9d289da16a4b0d87c1e", "v4.36.2"),
    "actions/upload-artifact": ("bbbca2ddaa5d8feaa63e36b76fdaad77386f024f", "v7.0.0"),
}
USES_LINE = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<action>[\w.-]+/[\w./-]+)@(?P<ref>\S+)"
                       r"(?:\s+#\s*(?P<comment>\S+))?\s*$")
EVENTS = {"push", "pull_request", "workflow_dispatch", "schedule", "merge_group", "release"}
ALLOWED_WRITE = {"security-events"}  # the only write scope the job needs
SEVERITY_ORDER = ["unknown", "informational", "low", "medium", "high"]
PREFLIGHT = "capguard: warning: before starting the program:"
REPORTS = ("capguard.sarif", "capguard.xml", "capguard.json")


def project_version():
    text = open(os.path.join(ROOT, "CMakeLists.txt")).read()
    return re.search(r"project\(capguard VERSION ([0-9.]+)", text).group(1)


def gpu_usable():
    """What capguard's preflight decides (cli/preflight.cpp): a driver and a device node."""
    try:
        import ctypes
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return bool(glob.glob("/dev/nvidia[0-9]*") or os.path.exists("/dev/dxg"))


# --- GitHub Actions -------------------------------------------------------------------------

def triggers(workflow):
    return workflow.get("on", workflow.get(True))  # PyYAML reads the bare key `on` as true


def github_structure(workflow, text):
    """The problems GitHub, zizmor or a reviewer would find in the workflow itself."""
    problems = []
    if not isinstance(workflow, dict):
        return ["not a mapping at the top level"]
    on = triggers(workflow)
    if not on:
        problems.append("no `on:` events: GitHub never runs the workflow")
    else:
        names = [on] if isinstance(on, str) else list(on)
        if "pull_request_target" in names:
            problems.append("pull_request_target runs fork code with the base's secrets")
        unknown = [n for n in names if n not in EVENTS]
        if unknown:
            problems.append(f"unknown events in `on:`: {unknown}")
    if workflow.get("permissions") != {}:
        problems.append("top-level `permissions:` is not {} (jobs should ask for what they use)")
    jobs = workflow.get("jobs")
    if not isinstance(jobs, dict) or not jobs:
        return problems + ["no jobs"]
    for name, job in jobs.items():
        perms = job.get("permissions")
        if not isinstance(perms, dict):
            problems.append(f"job {name}: no explicit permissions mapping")
            perms = {}
        for scope, level in perms.items():
            if level == "write" and scope not in ALLOWED_WRITE:
                problems.append(f"job {name}: {scope}: write is more than the job needs")
        steps = job.get("steps") or []
        for index, step in enumerate(steps):
            uses = str(step.get("uses", ""))
            where = f"job {name}, step {index + 1} ({step.get('name') or uses or 'run'})"
            if uses.startswith("actions/checkout@"):
                if (step.get("with") or {}).get("persist-credentials") is not False:
                    problems.append(f"{where}: no `persist-credentials: false`")
                if (step.get("with") or {}).get("repository"):
                    problems.append(f"{where}: checks out another repository")
            if uses.startswith("github/codeql-action/upload-sarif@"):
                with_ = step.get("with") or {}
                if not with_.get("sarif_file") or not with_.get("category"):
                    problems.append(f"{where}: upload-sarif without sarif_file and category")
                if perms.get("security-events") != "write":
                    problems.append(f"{where}: the job lacks security-events: write")
        if not any(str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@")
                   for s in steps):
            problems.append(f"job {name}: no SARIF upload")
        if "junit:capguard.xml" not in json.dumps(steps) or "capguard.xml" not in json.dumps(
                [s.get("with") for s in steps if "upload-artifact" in str(s.get("uses"))]):
            problems.append(f"job {name}: the JUnit report is not written and kept")
    for line in text.splitlines():
        match = USES_LINE.match(line)
        if not match:
            continue
        action, ref, comment = match["action"], match["ref"], match["comment"]
        pinned = PINS.get(action)
        if not re.fullmatch(r"[0-9a-f]{40}", ref):
            problems.append(f"{action}@{ref} is not pinned to a commit")
        elif pinned is None:
            problems.append(f"{action}@{ref}: not a pin this test knows (add it to PINS once "
                            "checked against the action's repository)")
        elif (ref, comment) != pinned:
            problems.append(f"{action}@{ref} # {comment}: expected {pinned[0]} # {pinned[1]}")
    return problems


def github_capguard_steps(workflow):
    """(env, script) of the steps that install or run capguard, in order."""
    for job in workflow["jobs"].values():
        for step in job.get("steps") or []:
            script = str(step.get("run", ""))
            if re.search(r"\bcapguard\b", script):
                if "${{" in script:
                    raise ValueError("a capguard step's script uses ${{ }} (pass values by env)")
                if step.get("shell") != "bash":
                    raise ValueError("a capguard step does not say `shell: bash`")
                yield dict(job.get("env") or {}, **(step.get("env") or {})), script


# --- GitLab CI ------------------------------------------------------------------------------

def gitlab_structure(config):
    problems = []
    jobs = {k: v for k, v in config.items() if isinstance(v, dict) and "script" in v}
    if not jobs:
        return ["no job with a script"]
    for name, job in jobs.items():
        if not job.get("tags"):
            problems.append(f"job {name}: no runner tags (it would run on any runner, no GPU)")
        artifacts = job.get("artifacts") or {}
        if artifacts.get("when") != "always":
            problems.append(f"job {name}: artifacts not kept when the job fails")
        if (artifacts.get("reports") or {}).get("junit") != "capguard.xml":
            problems.append(f"job {name}: capguard.xml is not its JUnit report")
        if "capguard.sarif" not in (artifacts.get("paths") or []):
            problems.append(f"job {name}: the SARIF report is not kept")
    return problems


def gitlab_capguard_scripts(config):
    for job in config.values():
        if isinstance(job, dict) and "script" in job:
            lines = list(job.get("before_script") or []) + [
                line for line in job["script"] if "capguard" in line or "set --" in line]
            yield dict(job.get("variables") or {}), "\n".join(lines)


# --- Running the capguard lines here ------------------------------------------------------

class Runner:
    """Runs the install and capguard lines of a CI file in a scratch directory."""

    def __init__(self, capguard, wheel, scratch):
        self.capguard, self.wheel, self.scratch = capguard, wheel, scratch
        self.version = project_version()
        self.gpu = gpu_usable()
        self.cache = {}

    def run(self, shell, env, script, suppressions):
        key = (tuple(shell), tuple(sorted(env.items())), script, suppressions)
        if key not in self.cache:
            self.cache[key] = self.run_once(shell, env, script, suppressions)
        return self.cache[key]

    def run_once(self, shell, env, script, suppressions):
        # One scratch repository and one venv per CI system for all runs (the first run makes
        # the venv, later ones find it up to date), as on a runner that keeps them, and a
        # minute faster; everything else in the repository is removed before each run.
        repo = os.path.join(self.scratch, "repo")
        os.makedirs(repo, exist_ok=True)
        for entry in os.listdir(repo):
            if entry != ".capguard-venv":
                path = os.path.join(repo, entry)
                shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        runner_temp = os.path.join(self.scratch, "runner-temp")
        os.makedirs(runner_temp, exist_ok=True)
        marker = os.path.join(repo, "tests-started")
        program = os.path.join(repo, "app_tests.sh")
        with open(program, "w") as f:
            f.write(f"#!/bin/sh\ntouch '{marker}'\n")
        os.chmod(program, 0o755)
        if suppressions:
            rule = "unjoined-fork" if suppressions == "valid" else "no-such-rule"
            with open(os.path.join(repo, ".capguard.supp"), "w") as f:
                f.write(f"# nothing suppressed yet\n{rule}:fun:never_called_anywhere\n")
        full_env = dict(os.environ)
        full_env.update({k: str(v) for k, v in env.items()})
        full_env.update({"RUNNER_TEMP": runner_temp, "APP_TESTS": program,
                         "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
        if self.wheel:
            full_env["CAPGUARD_PACKAGE"] = self.wheel
        else:  # no wheel: the install lines are skipped, the built capguard stands in
            script = self.fake_install([os.path.join(runner_temp, "capguard-venv"),
                                        os.path.join(repo, ".capguard-venv")], script)
        done = subprocess.run(shell + [script], cwd=repo, env=full_env, capture_output=True,
                              text=True, timeout=600)
        reports = {r: os.path.exists(os.path.join(repo, r)) for r in REPORTS}
        sarif = open(os.path.join(repo, "capguard.sarif")).read() if reports[
            "capguard.sarif"] else ""
        return done, os.path.exists(marker), reports, sarif

    def fake_install(self, venvs, script):
        for venv in venvs:
            if os.path.exists(os.path.join(venv, "bin", "capguard")):
                continue
            os.makedirs(os.path.join(venv, "lib", "capguard"), exist_ok=True)
            os.makedirs(os.path.join(venv, "bin"), exist_ok=True)
            os.symlink(self.capguard, os.path.join(venv, "bin", "capguard"))
            os.symlink(os.path.join(os.path.dirname(self.capguard), "libcapguard.so"),
                       os.path.join(venv, "lib", "capguard", "libcapguard.so"))
        return "\n".join(line for line in script.splitlines()
                         if not re.search(r"\bpip\b|-m venv|--version", line))

    def check(self, label, shell, env, script):
        problems = []
        for suppressions in (None, "valid", "broken"):
            where = f"{label} " + (f"with a {suppressions} .capguard.supp" if suppressions
                                   else "without .capguard.supp")
            done, started, reports, sarif = self.run(shell, env, script, suppressions)
            out, err = done.stdout, done.stderr
            if self.wheel and (f"Name: capguard-cuda" not in out or
                               f"Version: {self.version}" not in out or
                               f"capguard {self.version}" not in out):
                problems.append(f"{where}: the install lines did not show capguard-cuda "
                                f"{self.version} and its capguard; stdout:\n{out}{err}")
                continue
            if suppressions == "broken":
                if done.returncode != 2 or "no-such-rule" not in err:
                    problems.append(f"{where}: exit {done.returncode}, expected 2 naming "
                                    f"no-such-rule (the file is not passed?); stderr:\n{err}")
                continue
            if done.returncode != 3:
                problems.append(f"{where}: exit {done.returncode}, expected 3; stderr:\n{err}")
                continue
            capguard_lines = [l for l in err.splitlines() if l.startswith("capguard: ")]
            if not self.gpu:
                if started:
                    problems.append(f"{where}: the tests started without a GPU (no "
                                    "--fail-fast?)")
                if not capguard_lines or not capguard_lines[0].startswith(PREFLIGHT) or \
                        "--fail-fast" not in capguard_lines[0]:
                    problems.append(f"{where}: capguard's first line is not the preflight "
                                    f"check; stderr:\n{err}")
                if "--fail-fast" not in sarif:
                    problems.append(f"{where}: the SARIF report does not say why nothing ran")
            elif not started:
                problems.append(f"{where}: the tests did not start on this GPU machine")
            missing = [r for r, there in reports.items() if not there]
            if missing:
                problems.append(f"{where}: {', '.join(missing)} not written")
        return problems


# --- The tools ------------------------------------------------------------------------------

def schema_problems(tools, builtin, path, skipped):
    tool = os.path.join(tools, "check-jsonschema")
    if not os.access(tool, os.X_OK):
        skipped.append(f"schema of {path}: {tool} not found (scripts/test.sh installs it)")
        return []
    done = subprocess.run([tool, "--builtin-schema", builtin, path], capture_output=True,
                          text=True)
    return [] if done.returncode == 0 else [f"{path}: {builtin}: {done.stdout}{done.stderr}"]


def zizmor_problems(tools, path, skipped):
    tool = os.path.join(tools, "zizmor")
    if not os.access(tool, os.X_OK):
        skipped.append(f"zizmor on {path}: {tool} not found (scripts/test.sh installs it)")
        return []
    done = subprocess.run([tool, "--offline", "--no-progress", "--format", "json", path],
                          capture_output=True, text=True)
    try:
        findings = json.loads(done.stdout)
    except json.JSONDecodeError:
        return [f"zizmor on {path}: exit {done.returncode}: {done.stdout}{done.stderr}"]
    above_low = [f"{f['ident']} ({f['determinations']['severity']})" for f in findings
                 if SEVERITY_ORDER.index(f["determinations"]["severity"].lower()) >
                 SEVERITY_ORDER.index("low")]
    return [f"zizmor on {path}: findings above low: {', '.join(above_low)}"] if above_low else []


def check_github(path, text, runner, tools, skipped):
    workflow = yaml.safe_load(text)
    problems = github_structure(workflow, text)
    with tempfile.TemporaryDirectory() as scratch:  # zizmor and the schema read a file
        copy_ = os.path.join(scratch, "capguard.yml")
        with open(copy_, "w") as f:
            f.write(text)
        problems += schema_problems(tools, "vendor.github-workflows", copy_, skipped)
        problems += zizmor_problems(tools, copy_, skipped)
    try:
        steps = list(github_capguard_steps(workflow))
    except ValueError as error:
        return problems + [str(error)]
    if not steps:
        return problems + ["no step runs capguard"]
    env = {}
    for step_env, _ in steps:
        env.update(step_env)
    # GitHub runs each step as its own `bash -e {0}` script; one after the other here.
    script = "\n".join(f"( set -eo pipefail\n{body}\n) || exit $?" for _, body in steps)
    shell = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]
    return problems + runner.check("GitHub", shell, env, script)


def check_gitlab(path, text, runner, tools, skipped):
    config = yaml.safe_load(text)
    problems = gitlab_structure(config)
    with tempfile.TemporaryDirectory() as scratch:
        copy_ = os.path.join(scratch, ".gitlab-ci.yml")
        with open(copy_, "w") as f:
            f.write(text)
        problems += schema_problems(tools, "vendor.gitlab-ci", copy_, skipped)
    for env, script in gitlab_capguard_scripts(config):
        # The runner's shell: POSIX sh, stopping at the first failing line.
        problems += runner.check("GitLab", ["sh", "-ec"], env, script)
    return problems


# --- Mutations ------------------------------------------------------------------------------

def github_mutations(text):
    yield "an action pinned to a tag", text.replace(
        "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1",
        "actions/checkout@v4"), "is not pinned to a commit"
    yield "a pin with the wrong tag", text.replace("# v7.0.0", "# v7.0.1"), "expected"
    yield "credentials persisted", text.replace("persist-credentials: false",
                                                "persist-credentials: true"), "persist-credentials"
    yield "write-all", text.replace("permissions: {}", "permissions: write-all"), "top-level"
    yield "contents: write", text.replace("contents: read ", "contents: write"), \
        "contents: write is more"
    # Where there is a GPU, the program runs either way: not checkable there.
    yield "no --fail-fast", text.replace("--fail-fast ", ""), \
        None if gpu_usable() else "the tests started without a GPU"
    yield "the suppressions file never passed", text.replace('"${suppressions[@]}"', ""), \
        "broken .capguard.supp: exit 3"
    yield "a misspelt option", text.replace("--fail-on error", "--fail-on errors"), "exit 2,"
    yield "no SARIF category", text.replace("category: capguard", ""), "upload-sarif without"
    yield "an unknown event", text.replace("workflow_dispatch:", "workflow_dispatched:"), \
        "vendor.github-workflows"


def gitlab_mutations(text):
    yield "no JUnit report", text.replace("junit: capguard.xml", "junit: other.xml"), \
        "JUnit report"
    yield "no runner tags", text.replace("  tags: [gpu]\n", ""), "no runner tags"
    yield "the suppressions file never passed", text.replace('"$@"', ""), \
        "broken .capguard.supp: exit 3"
    yield "no --fail-fast", text.replace("--fail-fast ", ""), \
        None if gpu_usable() else "the tests started without a GPU"
    yield "a misspelt option", text.replace("--fail-on error", "--fail-on errors"), "exit 2,"
    yield "a misspelt keyword", text.replace("before_script:", "before-script:"), \
        "vendor.gitlab-ci"


def main():
    if len(sys.argv) not in (5, 6):
        print(__doc__.strip().splitlines()[-6], file=sys.stderr)
        return 2
    github, gitlab, capguard, tools = sys.argv[1:5]
    capguard = os.path.abspath(capguard)
    wheels = glob.glob(os.path.join(os.path.abspath(sys.argv[5]), "capguard_cuda-*.whl")) if len(
        sys.argv) == 6 else []
    skipped = []
    if not wheels:
        skipped.append("the install lines: no capguard_cuda wheel (the python_wheel test "
                       "builds it); the built capguard stands in")
    scratch = tempfile.mkdtemp(prefix="capguard-ci-")
    try:
        return check_all(github, gitlab, Runner(capguard, wheels[0] if wheels else None,
                                                 scratch), tools, skipped)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def check_all(github, gitlab, runner, tools, skipped):
    failures = 0
    checks = [(github, check_github, github_mutations), (gitlab, check_gitlab, gitlab_mutations)]
    for path, check, mutations in checks:
        text = open(path).read()
        problems = check(path, text, runner, tools, skipped)
        for problem in problems:
            print(f"FAIL: {path}: {problem}")
        failures += len(problems)
        if not problems:
            print(f"ok: {path}: schema, structure, pins and the capguard lines run here "
                  f"({'GPU' if runner.gpu else 'no GPU: --fail-fast stopped before the tests'})")
        for description, mutated, expected in mutations(text):
            if expected is None:
                print(f"skip: {description}: not checkable on this machine")
                continue
            if mutated == text:
                print(f"FAIL: the mutation '{description}' changed nothing in {path}")
                failures += 1
                continue
            caught = [p for p in check(path, mutated, runner, tools, []) if expected in p]
            if caught:
                print(f"ok: {description} is rejected: {caught[0].splitlines()[0][:150]}")
            elif any(expected in s or "not found" in s for s in skipped):
                print(f"skip: {description}: its check needs a tool that is missing")
            else:
                print(f"FAIL: {path} with {description} is not rejected for it ({expected!r})")
                failures += 1
    for reason in sorted(set(skipped)):
        print(f"skip: {reason}")
    if failures:
        return 1
    return 77 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
