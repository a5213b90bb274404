#!/usr/bin/env python3
"""Starts a new capguard rule from generated files, as clang-tidy's add_new_check.py does.

    scripts/add_rule.py my-rule-id --severity error|warning|note --summary "one line"

creates
    rules/my_rule_id.cpp              the rule: a compiling skeleton that reports nothing yet
    tests/rule_my_rule_id_test.cpp    its doctest suite: fails until it is filled in (TODO)
    testcases/my_rule_id.cu           the testcase program, `// expect: my-rule-id` on a placeholder
    testcases/my_rule_id_ok.cu        its correct twin
and adds the rule's row, in priority order (errors, then the capture-invalidated fallback, then
warnings, then notes), to
    rules/rule_table.cpp              the one rule table
    README.md                         the "What it finds" table
    testcases/check_expectations.py   the severities the testcase checker knows

Every place still to be written says TODO(add_rule.py). Nothing is written when the id is
invalid or any of these files already knows it (exit 1). --root points at another tree (tests).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

SEVERITIES = ("error", "warning", "note")
FALLBACK = "capture-invalidated"  # the error rule that comes after every other error rule
ID_PATTERN = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)+$")


class Refused(Exception):
    pass


def names(rule_id):
    snake = rule_id.replace("-", "_")
    symbol = "k" + "".join(part.capitalize() for part in rule_id.split("-"))
    return snake, symbol


def cpp_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def write(root, path, text, create=False):
    with open(os.path.join(root, path), "x" if create else "w", encoding="utf-8") as f:
        f.write(text)


# --- the rule table -------------------------------------------------------------------------

TABLE = "rules/rule_table.cpp"
ARRAY = re.compile(r"(constinit const Rule\* const kRules\[\] = \{)(.*?)(\n\};)", re.S)


def table_symbols(table):
    match = ARRAY.search(table)
    if not match:
        raise Refused(f"{TABLE}: the kRules array was not found")
    return re.findall(r"&(k\w+)", match.group(2))


def rule_severities(root):
    """Symbol -> (id, severity) of every rule file."""
    found = {}
    for entry in sorted(os.listdir(os.path.join(root, "rules"))):
        if not entry.endswith(".cpp"):
            continue
        text = read(root, os.path.join("rules", entry))
        for symbol, rule_id, severity in re.findall(
            r"constinit const Rule (k\w+)\{\s*\{\s*\"([a-z0-9-]+)\",\s*Severity::(\w+)", text
        ):
            found[symbol] = (rule_id, severity.lower())
    return found


def insertion_index(order, severity):
    """Where a rule of `severity` goes in `order` (a list of (id, severity) in table order)."""
    ids = [rule_id for rule_id, _ in order]
    if severity == "error" and FALLBACK in ids:
        return ids.index(FALLBACK)
    rank = SEVERITIES.index(severity)
    index = 0
    for i, (_, other) in enumerate(order):
        if SEVERITIES.index(other) <= rank:
            index = i + 1
    return index


def add_to_table(table, symbol, index, symbols):
    """The table with `symbol` declared and listed at position `index`."""
    new_symbols = symbols[:index] + [symbol] + symbols[index:]
    declaration = f"extern const Rule {symbol};\n"
    if index < len(symbols):
        anchor = f"extern const Rule {symbols[index]};\n"
        table = table.replace(anchor, declaration + anchor, 1)
    else:
        anchor = f"extern const Rule {symbols[-1]};\n"
        table = table.replace(anchor, anchor + declaration, 1)
    body = "\n    " + " ".join(f"&{s}," for s in new_symbols)  # clang-format makes the columns
    return ARRAY.sub(lambda m: m.group(1) + body + m.group(3), table, count=1)


# --- README and the testcase checker --------------------------------------------------------

def add_readme_row(readme, rule_id, severity, summary, after_id):
    row = f"| `{rule_id}` | {severity} | {summary} |\n"
    lines = readme.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith(f"| `{after_id}` |"):
            lines.insert(i + 1, row)
            return "".join(lines)
    raise Refused(f"README.md: no rule row for `{after_id}` to put `{rule_id}` after")


def add_checker_severity(checker, rule_id, severity, after_id):
    anchor = re.compile(rf'^(    "{re.escape(after_id)}": "\w+",\n)', re.M)
    if not anchor.search(checker):
        raise Refused(f"testcases/check_expectations.py: no SEVERITY entry for {after_id!r}")
    return anchor.sub(lambda m: m.group(1) + f'    "{rule_id}": "{severity}",\n', checker, count=1)


# --- generated files -------------------------------------------------------------------------

def rule_source(rule_id, symbol, severity, summary):
    return f"""// {rule_id}: {summary}
//
// TODO(add_rule.py): generated skeleton. Decide which calls this rule reports (rules/rule.h:
// key on the API kind and CUDA's result, take context from the capture model), fill the
// Draft, write the explanation and the fix below, and move its row in rule_table.cpp if
// another rule must get the call first. Until then it reports nothing.
#include "rules/rule.h"

namespace capguard::rules {{
namespace {{

bool check_call(const Call& /*call*/, const CaptureModel& /*model*/, Draft& /*draft*/) {{
  return false;  // TODO(add_rule.py): true after filling `draft` for a call this rule reports
}}

}}  // namespace

extern const Rule {symbol};
constinit const Rule {symbol}{{
    {{{cpp_string(rule_id)}, Severity::{severity.capitalize()},
     {cpp_string(summary)},
     "TODO(add_rule.py): what happens, a minimal example, and the fix.",
     "TODO(add_rule.py): the fix, in one line"}},
    &check_call,
    nullptr}};

}}  // namespace capguard::rules
"""


def test_source(rule_id):
    return f"""// TODO(add_rule.py): generated skeleton; the first case FAILS until it is filled in. Replay
// the calls that make {rule_id} report (tests/event_builder.h) and check the finding, then
// the correct twin that must not be reported.
#include <doctest/doctest.h>

#include "tests/event_builder.h"

using namespace capguard;
using namespace capguard::testing;

TEST_CASE("{rule_id}: TODO(add_rule.py) the mistake it reports") {{
  Sim sim;
  sim(begin(kS))(launch(kS))(end(kS));  // TODO(add_rule.py): the calls that make the mistake
  const Report& r = sim.finish();
  CHECK(rules_of(r) == Rules{{"{rule_id}"}});  // fails until the rule and this test are written
}}

TEST_CASE("{rule_id} twin: TODO(add_rule.py) the correct code it leaves alone") {{
  Sim sim;
  sim(begin(kS))(launch(kS))(end(kS));
  CHECK(sim.finish().findings.empty());
}}
"""


def testcase_source(rule_id, summary, twin):
    snake, _ = names(rule_id)
    if twin:
        head = f"// Twin of {snake}: the same work done the right way; capguard reports nothing.\n"
        culprit = "  LAUNCH_BUMP(args, stream);  // TODO(add_rule.py): the correct call\n"
    else:
        head = (
            f"// {rule_id}: {summary}\n"
            "// TODO(add_rule.py): the smallest program that makes this mistake, the culprit call on\n"
            "// the line that names the rule it expects (testcases/README.md: the conventions).\n"
        )
        culprit = (
            "  // TODO(add_rule.py): replace the placeholder below with the culprit call.\n"
            f"  LAUNCH_BUMP(args, stream);  // expect: {rule_id}\n"
        )
    return f"""{head}#include "common.h"

int main() {{
  BumpArgs args(device_buffer());
  warm_up(args);
  cudaStream_t stream = non_blocking_stream();

  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
{culprit}  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  replay(graph, stream);
  return 0;
}}
"""


# --- main ----------------------------------------------------------------------------------

def add_rule(root, rule_id, severity, summary):
    if not ID_PATTERN.match(rule_id):
        raise Refused(f"{rule_id!r} is not a kebab-case id of two words or more (my-rule-id)")
    if not summary.strip() or "\n" in summary or "|" in summary:
        raise Refused("the summary must be one non-empty line without '|'")
    snake, symbol = names(rule_id)
    created = {
        f"rules/{snake}.cpp": rule_source(rule_id, symbol, severity, summary),
        f"tests/rule_{snake}_test.cpp": test_source(rule_id),
        f"testcases/{snake}.cu": testcase_source(rule_id, summary, twin=False),
        f"testcases/{snake}_ok.cu": testcase_source(rule_id, summary, twin=True),
    }
    for path in created:
        if os.path.exists(os.path.join(root, path)):
            raise Refused(f"{path} already exists")

    table = read(root, TABLE)
    symbols = table_symbols(table)
    known = rule_severities(root)
    if symbol in symbols or any(rule_id == known_id for known_id, _ in known.values()):
        raise Refused(f"rule {rule_id} already exists")
    missing = [s for s in symbols if s not in known]
    if missing:
        raise Refused(f"{TABLE}: no rule file defines {', '.join(missing)}")
    order = [known[s] for s in symbols]
    index = insertion_index(order, severity)
    after_id = order[index - 1][0] if index > 0 else None
    if after_id is None:
        raise Refused("a rule cannot go before every other rule")

    readme = add_readme_row(read(root, "README.md"), rule_id, severity, summary, after_id)
    checker_path = "testcases/check_expectations.py"
    checker = add_checker_severity(read(root, checker_path), rule_id, severity, after_id)
    if f'"{rule_id}"' in read(root, checker_path):
        raise Refused(f"{checker_path} already knows {rule_id}")
    new_table = add_to_table(table, symbol, index, symbols)

    # Everything checked: write.
    for path, text in created.items():
        write(root, path, text, create=True)
    write(root, TABLE, new_table)
    write(root, "README.md", readme)
    write(root, checker_path, checker)
    clang_format = shutil.which("clang-format")
    if clang_format:
        cpp = [os.path.join(root, p) for p in [TABLE] + list(created) if p.endswith(".cpp")]
        subprocess.run([clang_format, "-i"] + cpp, check=False)
    return list(created) + [TABLE, "README.md", checker_path]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rule_id", help="kebab-case id, e.g. my-rule-id")
    parser.add_argument("--severity", required=True, choices=SEVERITIES)
    parser.add_argument("--summary", required=True, help="one line, as `capguard rules` prints it")
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="the source tree to change (default: this script's)")
    args = parser.parse_args()
    try:
        touched = add_rule(args.root, args.rule_id, args.severity, args.summary)
    except Refused as refusal:
        print(f"add_rule.py: {refusal}; nothing was changed", file=sys.stderr)
        return 1
    for path in touched:
        print(path)
    print("next: fill in every TODO(add_rule.py) (grep -rn 'TODO(add_rule.py)'), then record the "
          "testcase's trace on the GPU machine (testcases/README.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
