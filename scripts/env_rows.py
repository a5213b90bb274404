"""The rows of util/env.def, the one list of CAPGUARD_* environment variables, for the table of
docs/environment.md (env_rows.py --docs rewrites it), the man page and tests/env_list_test.py.

    rows(root) -> [Row(name, reader, default, meaning), ...]
"""
import collections
import os
import re
import sys

DEF = os.path.join("util", "env.def")
DOCS = os.path.join("docs", "environment.md")
Row = collections.namedtuple("Row", "name reader default meaning")
_ROW = re.compile(r'^CAPGUARD_ENV\("([A-Z0-9_]+)", "([^"]*)", "([^"]*)", "([^"]*)"\)$', re.M)
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
BEGIN = "<!-- environment table: generated from util/env.def by scripts/env_rows.py --docs -->\n"
END = "<!-- end of environment table -->\n"


def rows(root=ROOT):
    with open(os.path.join(root, DEF), encoding="utf-8") as f:
        return [Row(*m) for m in _ROW.findall(f.read())]


def docs_table(env_rows):
    lines = ["| variable | read by | default | meaning |", "|---|---|---|---|"]
    lines += [f"| `{r.name}` | {r.reader} | {r.default} | {r.meaning} |" for r in env_rows]
    return BEGIN + "\n".join(lines) + "\n" + END


def docs_with_table(docs, table):
    start, end = docs.find(BEGIN), docs.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{DOCS}: the environment table's markers were not found")
    return docs[:start] + table + docs[end + len(END):]


if __name__ == "__main__" and sys.argv[1:] in (["--docs"], ["--readme"]):  # --readme: before the docs
    path = os.path.join(ROOT, DOCS)
    with open(path, encoding="utf-8") as f:
        text = docs_with_table(f.read(), docs_table(rows()))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
