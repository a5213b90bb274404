"""The rows of rules/rules.def, the one list of rules, for the Python side: the expectations
checker's severities, the rule tables of README.md and docs/rules.md (rule_lists test) and
scripts/add_rule.py, which rewrites both tables.

    rows(root) -> [Row(symbol, id, severity, summary), ...] in priority order
    options(root) -> [Option(symbol, rule, name, default, meaning), ...] (rule: the rule's id)
"""
import collections
import os
import re

DEF = os.path.join("rules", "rules.def")
DOCS = os.path.join("docs", "rules.md")
Row = collections.namedtuple("Row", "symbol id severity summary")
Option = collections.namedtuple("Option", "symbol rule name default meaning")
_STRINGS = r'((?:"(?:[^"\\]|\\.)*"\s*)+)'
_ROW = re.compile(r'^CAPGUARD_RULE\((k\w+), "([a-z0-9-]+)", (Error|Warning|Note),\s*'
                  + _STRINGS + r'\)', re.M)
_OPTION = re.compile(r'^CAPGUARD_RULE_OPTION\((k\w+), (k\w+), "([a-z0-9-]+)", (\d+),\s*'
                     + _STRINGS + r'\)', re.M)
_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')
# docs/rules.md's generated part lies between these two lines.
BEGIN = "<!-- rule tables: generated from rules/rules.def by scripts/add_rule.py --tables -->\n"
END = "<!-- end of rule tables -->\n"


def _text(strings):
    return "".join(re.sub(r"\\(.)", r"\1", s) for s in _LITERAL.findall(strings))


def parse(text):
    return [Row(symbol, rule_id, severity.lower(), _text(summary))
            for symbol, rule_id, severity, summary in _ROW.findall(text)]


def parse_options(text):
    ids = {row.symbol: row.id for row in parse(text)}
    return [Option(symbol, ids.get(rule, rule), name, int(default), _text(meaning))
            for symbol, rule, name, default, meaning in _OPTION.findall(text)]


def _read(root):
    with open(os.path.join(root, DEF), encoding="utf-8") as f:
        return f.read()


_HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)


def rows(root=_HERE):
    return parse(_read(root))


def options(root=_HERE):
    return parse_options(_read(root))


def readme_table(rule_rows):
    """The rule table of README.md (and of docs/rules.md), generated from the rows."""
    lines = ["| rule | severity | what |", "|---|---|---|"]
    lines += [f"| `{r.id}` | {r.severity} | {r.summary} |" for r in rule_rows]
    return "\n".join(lines) + "\n"


def option_table(rule_options):
    """The rule options (`--rule-option RULE.NAME=VALUE`), generated from the option rows."""
    lines = ["| option | default | meaning |", "|---|---|---|"]
    lines += [f"| `{o.rule}.{o.name}` | {o.default} | {o.meaning} |" for o in rule_options]
    return "\n".join(lines) + "\n"


def docs_tables(rule_rows, rule_options):
    """docs/rules.md's generated part: the rule table, then the options table."""
    return (BEGIN + readme_table(rule_rows) + "\nTheir options, set with `--rule-option "
            "RULE.NAME=VALUE` on `run` and `report` (`capguard explain RULE` lists them too):\n\n"
            + option_table(rule_options) + END)


def docs_with_tables(docs, tables):
    """docs/rules.md with its generated part replaced (ValueError without the markers)."""
    start, end = docs.find(BEGIN), docs.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{DOCS}: the rule tables' markers were not found")
    return docs[:start] + tables + docs[end + len(END):]
