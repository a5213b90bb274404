#!/usr/bin/env python3
"""No rule id, rehearsal verdict, capture mode or severity is written as a string literal in the
analyzer's production code: each is named once, in its list (rules/rules.def,
model/enum_names.def), and code uses the enum and its generated name (to_string, mode_name,
RuleId). Also: no report format name (cli/formats.def) is compared with == or != as a literal.

    names_as_literals_test.py [ROOT]

A literal is the whole of a C++ string literal ("global", not "global mode"); comments are not
code. A self-test checks that the scan finds what it looks for.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "scripts"))
import rule_rows  # noqa: E402

# The analyzer's layers (interposer/ records, never judges, and names none of these).
LAYERS = ("trace", "util", "model", "rules", "symbolize", "report", "engine", "cli")
_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_COMMENT = re.compile(r'//[^\n]*|/\*.*?\*/', re.S)
_COMPARED = re.compile(r'(?:[!=]=\s*"([^"\\\n]*)")|(?:"([^"\\\n]*)"\s*[!=]=)')


def names(root):
    enum_def = open(os.path.join(root, "model", "enum_names.def"), encoding="utf-8").read()
    enum_def = _COMMENT.sub("", enum_def)
    found = {}
    for macro in ("CAPGUARD_SEVERITY", "CAPGUARD_CAPTURE_MODE", "CAPGUARD_REHEARSAL_VERDICT"):
        for m in re.finditer(macro + r'\(\w+, "([^"]+)"', enum_def):
            found[m.group(1)] = macro
    for row in rule_rows.rows(root):
        found[row.id] = "rule id"
    return found


def format_names(root):
    text = _COMMENT.sub("", open(os.path.join(root, "cli", "formats.def"), encoding="utf-8").read())
    return set(re.findall(r"CAPGUARD_FORMAT\((\w+)\)", text))


def strip_comments(code):
    # Comments go, string literals stay (a "//" inside a literal is not a comment).
    out, i = [], 0
    for m in re.finditer(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*.*?\*/', code,
                         re.S):
        out.append(code[i:m.start()])
        token = m.group(0)
        out.append(token if token[0] in "\"'" else "\n" * token.count("\n"))
        i = m.end()
    out.append(code[i:])
    return "".join(out)


def scan(path, code, forbidden, compared_only):
    problems = []
    code = strip_comments(code)
    for lineno, line in enumerate(code.split("\n"), 1):
        for m in _LITERAL.finditer(line):
            if m.group(1) in forbidden:
                problems.append(f"{path}:{lineno}: \"{m.group(1)}\" ({forbidden[m.group(1)]}) "
                                "written as a literal: use its enum")
        for m in _COMPARED.finditer(line):
            value = m.group(1) if m.group(1) is not None else m.group(2)
            if value in compared_only:
                problems.append(f"{path}:{lineno}: compared with the format name \"{value}\"")
    return problems


def self_test(forbidden, formats):
    bad = 'if (r.verdict == "never_executed") f("sync-during-capture");\nx == "json";'
    good = '// "global" in a comment\nf("global mode"); g("a // \\"error\\"");'
    assert len(scan("bad", bad, forbidden, formats)) == 3, scan("bad", bad, forbidden, formats)
    assert scan("good", good, forbidden, formats) == [], scan("good", good, forbidden, formats)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, os.pardir))
    forbidden = names(root)
    formats = format_names(root)
    # The lists really were read: an empty set would pass anything.
    assert {"sync-during-capture", "error", "global", "never_executed"} <= set(forbidden)
    assert "text" in formats
    self_test(forbidden, formats)
    problems = []
    for layer in LAYERS:
        for dirpath, _, files in os.walk(os.path.join(root, layer)):
            for name in sorted(files):
                if not name.endswith((".cpp", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                code = open(path, encoding="utf-8").read()
                problems += scan(os.path.relpath(path, root), code, forbidden, formats)
    for p in problems:
        print(p)
    print(f"{len(problems)} names written as literals")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
