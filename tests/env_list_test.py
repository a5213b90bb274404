#!/usr/bin/env python3
"""util/env.def is the one list of CAPGUARD_* environment variables: every one the code reads or
sets (a string literal "CAPGUARD_..." in the C++ or Python sources) is a row, every row is read
somewhere, docs/environment.md's table is the one generated from it (so a row missing from the
docs fails here), and the man page (when built) has
each row in its ENVIRONMENT section.

    env_list_test.py ROOT [MAN_PAGE]
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import env_rows  # noqa: E402

SOURCES = ("cli", "engine", "model", "rules", "symbolize", "report", "util", "trace", "interposer",
           "python")
LITERAL = re.compile(r"""["'](CAPGUARD_[A-Z0-9_]+)["']""")


def main():
    failed = []
    rows = env_rows.rows(ROOT)
    names = [r.name for r in rows]
    if len(rows) < 5 or len(set(names)) != len(names):
        failed.append(f"util/env.def: {len(rows)} rows read, names {names}")
    used = {}
    for top in SOURCES:
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if not name.endswith((".cpp", ".h", ".py")):
                    continue
                path = os.path.join(dirpath, name)
                for m in LITERAL.finditer(open(path, encoding="utf-8").read()):
                    used.setdefault(m.group(1), os.path.relpath(path, ROOT))
    for name, where in sorted(used.items()):
        if name not in names:
            failed.append(f"{where} uses {name}, which util/env.def does not list")
    for name in names:
        if name not in used:
            failed.append(f"util/env.def lists {name}, which no source reads or sets")
    docs = open(os.path.join(ROOT, env_rows.DOCS), encoding="utf-8").read()
    if env_rows.docs_table(rows) not in docs:
        failed.append(f"{env_rows.DOCS}: the environment table is not the one util/env.def "
                      "gives (run scripts/env_rows.py --docs)")
    for row in rows:  # said apart from the whole table, so that the message names the row
        if f"| `{row.name}` |" not in docs:
            failed.append(f"{env_rows.DOCS} lacks the row of {row.name}")
    if len(sys.argv) > 2 and os.path.exists(sys.argv[2]):
        man = open(sys.argv[2], encoding="utf-8").read()
        section = man.split(".SH ENVIRONMENT", 1)[-1].split(".SH ", 1)[0]
        for name in names:
            if f".B {name}\n" not in section:
                failed.append(f"{sys.argv[2]}: {name} is not in the ENVIRONMENT section")
    for f in failed:
        print("FAIL:", f)
    print(f"{len(rows)} variables, {len(used)} used in the sources")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
