#!/usr/bin/env python3
"""scripts/add_rule.py on a scratch copy of the tree: it touches only the rule's file, one
rules/rules.def row, its test, its testcase pair, the pair's synthetic recorded traces and
the generated rule tables of README.md and docs/rules.md; the new rule, the table and the test skeleton compile against
the tree, the rule is defined where the table looks for it, the synthetic traces are marked as
such and (with $CAPGUARD) the twins replay and pass check_expectations.py --from-traces, and a
second run with the same id refuses and changes nothing.

    [CAPGUARD=build/capguard] add_rule_test.py SOURCE_DIR CXX [INCLUDE_DIR:INCLUDE_DIR...]
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

RULE_ID = "scratch-rule-for-test"
SNAKE = RULE_ID.replace("-", "_")


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def copy_tree(source, scratch):
    """Only what add_rule.py edits and the headers the generated files include."""
    for name in ("README.md", ".clang-format"):  # testcases/recorded is made as needed
        shutil.copy(os.path.join(source, name), scratch)
    os.makedirs(os.path.join(scratch, "docs"))
    shutil.copy(os.path.join(source, "docs", "rules.md"), os.path.join(scratch, "docs"))
    shutil.copytree(os.path.join(source, "rules"), os.path.join(scratch, "rules"))
    os.makedirs(os.path.join(scratch, "scripts"))
    shutil.copy(os.path.join(source, "scripts", "rule_rows.py"), os.path.join(scratch, "scripts"))
    for folder, suffixes in (("util", (".h",)), ("model", (".h", ".def")), ("report", (".h",)),
                             ("engine", (".h",)),
                             ("interposer", (".h",)), ("trace", (".h", ".def")),
                             ("tests", (".h",)),
                             ("testcases", (".cu", ".h", ".py"))):
        os.makedirs(os.path.join(scratch, folder))
        for entry in os.listdir(os.path.join(source, folder)):
            if entry.endswith(suffixes):
                shutil.copy(os.path.join(source, folder, entry), os.path.join(scratch, folder))


def file_digests(root):
    """Relative path -> sha256 of every file under root, caches left out."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = hashlib.sha256(f.read()).hexdigest()
    return out


def digest(root):
    return hashlib.sha256(repr(sorted(file_digests(root).items())).encode()).hexdigest()


def add_rule(source, scratch, *extra):
    return subprocess.run(
        [sys.executable, os.path.join(source, "scripts", "add_rule.py"), RULE_ID, "--severity",
         "warning", "--summary", "a rule made by the test of add_rule.py", "--root", scratch,
         *extra], capture_output=True, text=True)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    source, cxx = sys.argv[1], sys.argv[2]
    # The compiler's own directories stay out: -isystem /usr/include breaks #include_next.
    includes = [d for d in (sys.argv[3] if len(sys.argv) > 3 else "").split(":")
                if d and d not in ("/usr/include", "/usr/local/include")]
    with tempfile.TemporaryDirectory(prefix="add_rule_test.") as scratch:
        copy_tree(source, scratch)
        before_files = file_digests(scratch)
        first = add_rule(source, scratch)
        if first.returncode != 0:
            fail(f"first run: exit {first.returncode}: {first.stderr}")
        after_files = file_digests(scratch)
        touched = sorted(p for p in set(before_files) | set(after_files)
                         if before_files.get(p) != after_files.get(p))
        synthetic = [f"testcases/recorded/traces/{program}/capguard.1.trace{suffix}"
                     for program in (SNAKE, SNAKE + "_shared", SNAKE + "_ok", SNAKE + "_ok_shared")
                     for suffix in ("", ".symbols")]
        allowed = sorted([f"rules/{SNAKE}.cpp", f"tests/rule_{SNAKE}_test.cpp",
                          f"testcases/{SNAKE}.cu", f"testcases/{SNAKE}_ok.cu", "rules/rules.def",
                          "README.md", "docs/rules.md"] + synthetic)
        if touched != allowed:
            fail(f"add_rule.py touched {touched}, expected {allowed}")
        sys.path.insert(0, os.path.join(scratch, "scripts"))
        import rule_rows
        rows = rule_rows.rows(scratch)
        ids = [row.id for row in rows]
        if ids.count(RULE_ID) != 1 or rows[ids.index(RULE_ID)].severity != "warning":
            fail(f"rules.def has no single warning row for {RULE_ID}: {ids}")
        if ids.index(RULE_ID) < ids.index("capture-invalidated") or any(
                row.severity == "note" for row in rows[:ids.index(RULE_ID)]):
            fail(f"the warning row is out of priority order: {ids}")

        for path in (f"rules/{SNAKE}.cpp", f"tests/rule_{SNAKE}_test.cpp",
                     f"testcases/{SNAKE}.cu", f"testcases/{SNAKE}_ok.cu"):
            if not os.path.isfile(os.path.join(scratch, path)):
                fail(f"{path} was not created")
        with open(os.path.join(scratch, "README.md"), encoding="utf-8") as f:
            if rule_rows.readme_table(rows) not in f.read():
                fail("README.md's rule table is not the one rules.def makes")
        with open(os.path.join(scratch, "docs", "rules.md"), encoding="utf-8") as f:
            if rule_rows.docs_tables(rows, rule_rows.options(scratch)) not in f.read():
                fail("docs/rules.md's tables are not the ones rules.def makes")

        # The testcase checker knows the rule and finds the one expectation.
        sys.path.insert(0, os.path.join(scratch, "testcases"))
        import check_expectations
        expected = check_expectations.parse_expectations(
            os.path.join(scratch, "testcases", f"{SNAKE}.cu"))
        if [rule for rule, _, _ in expected] != [RULE_ID]:
            fail(f"testcase expectations: {dict(expected)}")
        if check_expectations.parse_expectations(
                os.path.join(scratch, "testcases", f"{SNAKE}_ok.cu")):
            fail("the twin expects findings")

        # The synthetic recordings say what they are, and replay without a GPU: the twins pass
        # the recorded-trace check now (the mistake passes once the rule and its trace are made).
        with open(os.path.join(scratch, synthetic[0]), encoding="utf-8") as f:
            text = f.read()
            if "\nc synthetic%20trace" not in text:
                fail(f"{synthetic[0]} is not marked as synthetic")
        # ... in the current trace format (trace/format.h), not a frozen older one.
        with open(os.path.join(scratch, "trace", "format.h"), encoding="utf-8") as f:
            current = re.search(r"kFormatVersion = (\d+);", f.read()).group(1)
        if text.split("\n", 1)[0].split(" ")[-1] != current:
            fail(f"{synthetic[0]} starts {text.split(chr(10), 1)[0]!r}, not format {current}")
        capguard = os.environ.get("CAPGUARD")
        if capguard:
            checked = subprocess.run(
                [sys.executable, os.path.join(scratch, "testcases", "check_expectations.py"),
                 "--source", os.path.join(scratch, "testcases"), "--capguard", capguard,
                 "--from-traces", os.path.join(scratch, "testcases", "recorded"),
                 "--only", f"^{SNAKE}_ok", "--out", os.path.join(scratch, "replayed")],
                capture_output=True, text=True)
            if checked.returncode != 0 or "2 passed, 0 failed" not in checked.stdout:
                fail(f"the synthetic twins do not pass check_expectations.py --from-traces:\n"
                     f"{checked.stdout}{checked.stderr}")

        # Twice with the same id: refused, nothing touched.
        before = digest(scratch)
        second = add_rule(source, scratch)
        if second.returncode != 1 or "already exists" not in second.stderr:
            fail(f"second run: exit {second.returncode}: {second.stderr}")
        if digest(scratch) != before:
            fail("the refused second run changed files")

        # The generated sources compile against the tree; the table's reference is defined.
        flags = ["-std=c++20", "-O0", "-c", "-DFMT_HEADER_ONLY=1", "-I", scratch]
        for directory in includes:
            flags += ["-isystem", directory]
        objects = {}
        for path in (f"rules/{SNAKE}.cpp", "rules/rule_table.cpp", f"tests/rule_{SNAKE}_test.cpp"):
            out = os.path.join(scratch, os.path.basename(path) + ".o")
            built = subprocess.run([cxx, *flags, os.path.join(scratch, path), "-o", out],
                                   capture_output=True, text=True)
            if built.returncode != 0:
                fail(f"{path} does not compile:\n{built.stderr}")
            objects[path] = out
        symbol = "capguard::rules::k" + "".join(p.capitalize() for p in RULE_ID.split("-"))

        def nm(path):
            return subprocess.run(["nm", "-C", objects[path]], capture_output=True,
                                  text=True).stdout

        if f" U {symbol}" not in nm("rules/rule_table.cpp"):
            fail(f"rules/rule_table.cpp does not refer to {symbol}")
        defined = [line for line in nm(f"rules/{SNAKE}.cpp").splitlines()
                   if line.endswith(f" {symbol}") and line.split()[-2] in ("D", "R")]
        if not defined:
            fail(f"rules/{SNAKE}.cpp does not define {symbol}")
    print("add_rule.py: generated rule, table row, test and testcases check out; a second run "
          "refuses")
    return 0


if __name__ == "__main__":
    sys.exit(main())
