#!/usr/bin/env python3
"""No comment, string, doc page or test of the checkout cites a tracker number ("issue N"): the
tracker is not public, so a reader cannot follow one. Say the reason itself, or point at a
heading of docs/decisions.md where it takes a paragraph. Upstream references name their
repository (pytorch#193402, nccl#2351) and are not matched.

    reasons_in_words_test.py [ROOT]

Every text file under ROOT is read except build outputs and git's own (ROOT's top-level folders
that .gitignore names, .git, shared/). A number on the next line of a comment counts too
("(issue" at a line's end, "// N: ..." below it). A self-test checks that the scan finds what it
looks for.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Build outputs and tools' folders at the top of the checkout (.gitignore's "/name/" rows), and
# the project brief's shared/ folder, which is no part of the repository.
SKIPPED_TOP = {".git", "shared", "out", "dist", ".whl", ".gl", ".gpu-bundle", ".cuda12-bundle"}
SKIPPED_ANYWHERE = {"__pycache__", ".pytest_cache"}
# "issue N", "Issues N and M", "issue #N", and a number wrapped onto the next comment line.
_CITED = re.compile(r"\bissues?(?:\s|//|#|\*)*#?\d", re.I)


def ignored_top(root):
    """The top-level entries git ignores here (.gitignore and the checkout's own excludes, such as
    local copies of other projects' suites): none of the repository's text."""
    import subprocess
    names = [n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n))]
    try:
        out = subprocess.run(["git", "-C", root, "check-ignore", "--stdin"], input="\n".join(names),
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return set()
    return {line.strip().rstrip("/") for line in out.stdout.splitlines() if line.strip()}


IGNORED_TOP = set()


def skipped_dir(root, dirpath, name):
    if name in SKIPPED_ANYWHERE:
        return True
    return dirpath == root and (name in SKIPPED_TOP or name in IGNORED_TOP or
                                name.startswith("build"))


def scan(path, text):
    problems = []
    for m in _CITED.finditer(text):
        lineno = text.count("\n", 0, m.start()) + 1
        line = text.split("\n")[lineno - 1].strip()
        problems.append(f"{path}:{lineno}: cites a tracker number, say the reason instead: {line}")
    return problems


def self_test():
    # Spelled in pieces so that this file does not cite what it looks for.
    word = "iss" + "ue"
    bad = [f"// Budgets ({word} 35).", f"What {word}s 32 and 34 added", f"{word.title()} #12 asks",
           f"// bounded (x, {word}\n// 35: 240 MiB)", f"# {word.upper()} 52: a FIFO"]
    good = ["pytorch#193402 and nccl#2351", f"the {word} tracker", f"{word}-49-comments",
            f"a known {word}: 3 of them", "capture #2"]
    for text in bad:
        assert len(scan("bad", text)) == 1, (text, scan("bad", text))
    for text in good:
        assert scan("good", text) == [], (text, scan("good", text))


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, os.pardir))
    self_test()
    problems, read = [], 0
    IGNORED_TOP.update(ignored_top(root))
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not skipped_dir(root, dirpath, d))
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            if not os.path.isfile(path) or os.path.islink(path):
                continue
            with open(path, "rb") as f:
                data = f.read()
            if b"\0" in data[:8192]:
                continue  # binary: images, archives
            read += 1
            problems += scan(os.path.relpath(path, root), data.decode("utf-8", "replace"))
    # The walk really reached the sources: an empty walk would pass anything.
    assert read > 500, f"only {read} text files under {root}"
    for p in problems:
        print(p)
    print(f"{len(problems)} tracker numbers cited in {read} text files")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
