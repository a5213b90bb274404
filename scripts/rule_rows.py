"""The rows of rules/rules.def, the one list of rules, for the Python side: the expectations
checker's severities, the README's rule table (rule_lists test) and scripts/add_rule.py.

    rows(root) -> [Row(symbol, id, severity, summary), ...] in priority order
"""
import collections
import os
import re

DEF = os.path.join("rules", "rules.def")
Row = collections.namedtuple("Row", "symbol id severity summary")
_ROW = re.compile(r'^CAPGUARD_RULE\((k\w+), "([a-z0-9-]+)", (Error|Warning|Note),\s*'
                  r'((?:"(?:[^"\\]|\\.)*"\s*)+)\)', re.M)
_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


def parse(text):
    return [Row(symbol, rule_id, severity.lower(),
                "".join(re.sub(r"\\(.)", r"\1", s) for s in _LITERAL.findall(summary)))
            for symbol, rule_id, severity, summary in _ROW.findall(text)]


def rows(root=os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)):
    with open(os.path.join(root, DEF), encoding="utf-8") as f:
        return parse(f.read())


def readme_table(rule_rows):
    """The README's "What it finds" table, generated from the rows."""
    lines = ["| rule | severity | what |", "|---|---|---|"]
    lines += [f"| `{r.id}` | {r.severity} | {r.summary} |" for r in rule_rows]
    return "\n".join(lines) + "\n"
