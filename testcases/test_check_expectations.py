#!/usr/bin/env python3
"""Self-test of check_expectations.py, without a GPU: a stand-in for capguard writes the JSON
report that each test dictates, and the checker must pass or fail the program for the right
reason. Run: python3 testcases/test_check_expectations.py"""

import json
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_expectations.py")

# Plays `capguard run|report`: writes the report named by -o from $FAKE_REPORTS[program] and exits
# with the status given there. The program is the basename of the last argument.
FAKE_CAPGUARD = textwrap.dedent("""\
    #!/usr/bin/env python3
    import json, os, sys
    args = sys.argv[1:]
    output = args[args.index("-o") + 1]
    program = os.path.basename(args[-1].rstrip("/"))
    answer = json.loads(os.environ["FAKE_REPORTS"])[program]
    log = os.environ["FAKE_LOG"]
    with open(log, "a") as file:
        file.write(args[0] + " " + program + "\\n")
    with open(log + ".args", "a") as file:
        file.write(json.dumps(args) + "\\n")
    findings = [{"rule": rule, "severity": "error",
                 "location": {"frames": [{"function": "cudaMalloc", "file": "", "line": 0},
                                         {"function": "main", "file": "/src/" + file, "line": line}],
                              "user_frame": 1}}
                for rule, file, line in answer["findings"]]
    with open(output, "w") as file:
        json.dump({"tool": "capguard", "processes": [{"pid": 1, "attached": True}],
                   "findings": findings, "rehearsals": answer.get("rehearsals", [])}, file)
    sys.exit(answer["exit"])
    """)

MISTAKE = "int main() {\n  cudaMalloc(&p, 1);  // expect: unsafe-call-during-capture\n}\n"
TWIN = "int main() { return 0; }\n"


def executable(path, text):
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


class CheckExpectationsTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.TemporaryDirectory()
        self.dir = self.root.name
        self.source = os.path.join(self.dir, "src")
        self.build = os.path.join(self.dir, "build")
        os.makedirs(self.source)
        os.makedirs(os.path.join(self.build, "testcases"))
        self.capguard = os.path.join(self.dir, "capguard")
        executable(self.capguard, FAKE_CAPGUARD)
        self.log = os.path.join(self.dir, "calls.log")
        self.add_program("alloc.cu", MISTAKE)
        self.add_program("alloc_ok.cu", TWIN)

    def tearDown(self):
        self.root.cleanup()

    def add_program(self, file_name, text):
        with open(os.path.join(self.source, file_name), "w", encoding="utf-8") as file:
            file.write(text)
        stem = os.path.splitext(file_name)[0]
        for name in (stem, stem + "_shared"):
            executable(os.path.join(self.build, "testcases", name), "#!/bin/sh\nexit 0\n")

    def check(self, reports, *extra):
        env = dict(os.environ, FAKE_REPORTS=json.dumps(reports), FAKE_LOG=self.log)
        command = [sys.executable, CHECKER, "--source", self.source, "--capguard", self.capguard,
                   "--out", os.path.join(self.dir, "out"), *extra]
        if "--from-traces" not in extra:
            command += ["--build", self.build]
        return subprocess.run(command, env=env, capture_output=True, text=True)

    def row(self, output, program):
        return next(line for line in output.splitlines() if line.startswith(program + " "))

    def correct_reports(self):
        culprit = {"findings": [["unsafe-call-during-capture", "alloc.cu", 2]], "exit": 1}
        clean = {"findings": [], "exit": 0}
        return {"alloc": culprit, "alloc_shared": culprit, "alloc_ok": clean, "alloc_ok_shared": clean}

    def test_expected_findings_and_clean_twins_pass(self):
        result = self.check(self.correct_reports())
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("4 passed, 0 failed", result.stdout)

    def test_finding_on_another_line_fails_with_both_sides(self):
        reports = self.correct_reports()
        reports["alloc_shared"] = {"findings": [["unsafe-call-during-capture", "alloc.cu", 3]], "exit": 1}
        result = self.check(reports)
        self.assertEqual(result.returncode, 1)
        row = self.row(result.stdout, "alloc_shared")
        self.assertIn("missing unsafe-call-during-capture:2", row)
        self.assertIn("unexpected unsafe-call-during-capture:3", row)
        self.assertIn("PASS", self.row(result.stdout, "alloc "))

    def test_a_warning_in_a_twin_fails(self):
        reports = self.correct_reports()
        reports["alloc_ok"] = {"findings": [["escaped-sync-copy", "alloc_ok.cu", 1]], "exit": 0}
        result = self.check(reports)
        self.assertEqual(result.returncode, 1)
        self.assertIn("FAIL: unexpected escaped-sync-copy:1", self.row(result.stdout, "alloc_ok"))

    def test_a_duplicate_finding_fails(self):
        reports = self.correct_reports()
        reports["alloc"] = {"findings": [["unsafe-call-during-capture", "alloc.cu", 2]] * 2, "exit": 1}
        result = self.check(reports)
        self.assertIn("FAIL: unexpected unsafe-call-during-capture:2", self.row(result.stdout, "alloc"))

    def test_wrong_exit_status_fails(self):
        reports = self.correct_reports()
        reports["alloc"]["exit"] = 0
        result = self.check(reports)
        self.assertIn("exit 0, expected 1", self.row(result.stdout, "alloc"))

    def test_capguard_that_cannot_attach_fails(self):
        reports = self.correct_reports()
        reports["alloc_ok"] = {"findings": [], "exit": 3}
        result = self.check(reports)
        self.assertIn("could not attach", self.row(result.stdout, "alloc_ok"))

    def test_capguard_args_and_rehearsal_verdicts(self):
        self.add_program("step.cu", "// capguard-args: --rehearse step --rehearse-mode relaxed\n"
                         "// expect-rehearsal: step capturable_after_warmup 1\n"
                         "int main() {\n  cudaMalloc(&p, 1);  // expect: unsafe-call-during-capture\n}\n")
        culprit = {"findings": [["unsafe-call-during-capture", "step.cu", 4]], "exit": 1,
                   "rehearsals": [{"name": "step", "verdict": "capturable_after_warmup", "warmups": 1}]}
        reports = dict(self.correct_reports(), step=culprit,
                       step_shared=dict(culprit, rehearsals=[{"name": "step", "verdict": "not_capturable",
                                                              "warmups": 0}]))
        result = self.check(reports, "--only", "step")
        self.assertEqual(self.row(result.stdout, "step").split("|")[-1].strip(), "PASS")
        self.assertIn("region step: not_capturable after 0 warm-up(s), expected capturable_after_warmup after 1",
                      self.row(result.stdout, "step_shared"))
        with open(self.log + ".args", encoding="utf-8") as file:
            args = [json.loads(line) for line in file]
        self.assertIn(["--rehearse", "step", "--rehearse-mode", "relaxed", "--"],
                      [a[a.index("--rehearse"):a.index("--") + 1] for a in args])
        os.makedirs(os.path.join(self.dir, "recorded", "traces", "step"))
        os.remove(self.log + ".args")
        self.check(reports, "--only", "^step$", "--from-traces", os.path.join(self.dir, "recorded"))
        with open(self.log + ".args", encoding="utf-8") as file:
            report_args = json.loads(file.readline())
        self.assertEqual(report_args[0], "report")
        self.assertIn("--rehearse-mode", report_args)
        self.assertNotIn("--rehearse", report_args)

    def test_from_traces_skips_a_run_option_that_no_recorded_program_uses(self):
        self.add_program("step.cu", "// capguard-args: --rehearse step\nint main() { return 0; }\n")
        for name in self.correct_reports():
            os.makedirs(os.path.join(self.dir, "recorded", "traces", name))
        result = self.check(self.correct_reports(), "--from-traces", os.path.join(self.dir, "recorded"))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("SKIP: no recorded trace yet (no program run with --rehearse is recorded",
                      self.row(result.stdout, "step"))

    def test_missing_binary_fails(self):
        os.remove(os.path.join(self.build, "testcases", "alloc_ok_shared"))
        result = self.check(self.correct_reports())
        self.assertIn("FAIL: not built", self.row(result.stdout, "alloc_ok_shared"))

    def test_from_traces_runs_report_on_each_recorded_trace(self):
        for name in self.correct_reports():
            os.makedirs(os.path.join(self.dir, "recorded", "traces", name))
        result = self.check(self.correct_reports(), "--from-traces", os.path.join(self.dir, "recorded"))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        with open(self.log, encoding="utf-8") as file:
            self.assertEqual(sorted(file.read().split("\n")[:-1])[0], "report alloc")

    def test_from_traces_skips_library_programs_not_recorded_yet_but_not_top_level_ones(self):
        os.makedirs(os.path.join(self.source, "libs"))
        with open(os.path.join(self.source, "libs", "gemm_ok.cu"), "w", encoding="utf-8") as file:
            file.write(TWIN)
        for name in ("alloc", "alloc_shared", "alloc_ok"):
            os.makedirs(os.path.join(self.dir, "recorded", "traces", name))
        result = self.check(self.correct_reports(), "--from-traces", os.path.join(self.dir, "recorded"))
        self.assertIn("SKIP: no recorded trace yet", self.row(result.stdout, "gemm_ok"))
        self.assertIn("FAIL: no recorded trace", self.row(result.stdout, "alloc_ok_shared"))
        self.assertIn("3 passed, 1 failed, 1 skipped", result.stdout)

    def test_from_traces_skips_a_program_its_pending_list_names_and_only_that(self):
        for name in ("alloc", "alloc_shared", "alloc_ok"):
            os.makedirs(os.path.join(self.dir, "recorded", "traces", name))
        with open(os.path.join(self.dir, "recorded", "pending.txt"), "w", encoding="utf-8") as file:
            file.write("# written after the recording\nalloc_ok_shared  # the twin\nnot_a_program\n")
        result = self.check(self.correct_reports(), "--from-traces", os.path.join(self.dir, "recorded"))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("SKIP: no recorded trace yet (awaits its recording:",
                      self.row(result.stdout, "alloc_ok_shared"))
        self.assertIn("3 passed, 0 failed, 1 skipped", result.stdout)
        os.remove(os.path.join(self.dir, "recorded", "pending.txt"))
        result = self.check(self.correct_reports(), "--from-traces", os.path.join(self.dir, "recorded"))
        self.assertIn("FAIL: no recorded trace", self.row(result.stdout, "alloc_ok_shared"))

    def test_from_traces_skips_a_rule_that_no_recorded_program_is_about(self):
        self.add_program("fresh.cu", "int main() {\n  f();  // expect: escaped-sync-copy\n}\n")
        self.add_program("fresh_ok.cu", TWIN)
        for name in self.correct_reports():
            os.makedirs(os.path.join(self.dir, "recorded", "traces", name))
        result = self.check(self.correct_reports(), "--from-traces", os.path.join(self.dir, "recorded"))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        for name in ("fresh", "fresh_shared", "fresh_ok", "fresh_ok_shared"):
            self.assertIn("SKIP: no recorded trace yet (no program of rule escaped-sync-copy is recorded",
                          self.row(result.stdout, name))
        self.assertIn("4 passed, 0 failed, 4 skipped", result.stdout)

    def test_suites_pick_the_folders_run(self):
        os.makedirs(os.path.join(self.source, "multi"))
        with open(os.path.join(self.source, "multi", "two_gpus_ok.cu"), "w", encoding="utf-8") as file:
            file.write(TWIN)
        listing = [sys.executable, CHECKER, "--source", self.source, "--list"]
        default = subprocess.run(listing, capture_output=True, text=True).stdout
        self.assertNotIn("two_gpus_ok", default)
        multi = subprocess.run(listing + ["--suites", "multi"], capture_output=True, text=True).stdout
        self.assertIn("two_gpus_ok", multi)
        self.assertNotIn("alloc", multi)

    def test_unknown_rule_id_is_a_usage_error(self):
        self.add_program("typo.cu", "x();  // expect: unsafe-call\n")
        result = self.check(self.correct_reports())
        self.assertEqual(result.returncode, 2)
        self.assertIn("unknown rule id 'unsafe-call'", result.stderr)

    def test_list_shows_expectations_and_exit_status(self):
        self.add_program("two.cpp", "a();  // expect: sync-during-capture, relaxed-mode-unsafe-call\n")
        result = subprocess.run([sys.executable, CHECKER, "--source", self.source, "--list"],
                                capture_output=True, text=True)
        row = self.row(result.stdout, "two")
        self.assertIn("none", row)
        self.assertIn("relaxed-mode-unsafe-call:1, sync-during-capture:1", row)
        self.assertNotIn("two_shared", result.stdout)

    def test_a_count_expects_that_many_findings_on_the_line(self):
        self.add_program("threads.cu", "a();\nb();  // expect: sync-during-capture*3\n")
        three = {"findings": [["sync-during-capture", "threads.cu", 2]] * 3, "exit": 1}
        two = {"findings": [["sync-during-capture", "threads.cu", 2]] * 2, "exit": 1}
        reports = self.correct_reports()
        reports.update({"threads": three, "threads_shared": two})
        result = self.check(reports)
        self.assertIn("PASS", self.row(result.stdout, "threads"))
        self.assertIn("FAIL", self.row(result.stdout, "threads_shared"))


if __name__ == "__main__":
    unittest.main()
