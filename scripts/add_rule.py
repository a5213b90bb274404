#!/usr/bin/env python3
"""Starts a new capguard rule from generated files, as clang-tidy's add_new_check.py does.

    scripts/add_rule.py my-rule-id --severity error|warning|note --summary "one line"
    scripts/add_rule.py --tables      only regenerate the rule tables of README.md and
                                      docs/rules.md from rules/rules.def (--readme: the same)

creates
    rules/my_rule_id.cpp              the rule: a compiling skeleton that reports nothing yet
    tests/rule_my_rule_id_test.cpp    its doctest suite: fails until it is filled in (TODO)
    testcases/my_rule_id.cu           the testcase program, `// expect: my-rule-id` on a placeholder
    testcases/my_rule_id_ok.cu        its correct twin
    testcases/recorded/traces/my_rule_id{,_shared,_ok,_ok_shared}/capguard.1.trace{,.symbols}
                                      synthetic recorded traces of the pair, written in the
                                      trace grammar and marked as such (no GPU needed; a GPU
                                      recording replaces them later)
and adds the rule's one row, in priority order (errors, then the capture-invalidated fallback,
then warnings, then notes), to rules/rules.def, the one list of rules: the rule table, `capguard
rules` and testcases/check_expectations.py take it from there. README.md's rule table and
docs/rules.md's tables (the rules, their options) are generated from that list (rewritten here,
checked by the rule_lists test).

Every place still to be written says TODO(add_rule.py). Nothing is written when the id is
invalid or already known (exit 1). --root points at another tree (tests).
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


# --- the one list of rules ----------------------------------------------------------------

DEF = "rules/rules.def"


def rule_rows_module(root):
    """scripts/rule_rows.py of the tree being changed (the reader of rules.def)."""
    sys.path.insert(0, os.path.join(root, "scripts"))
    try:
        import rule_rows
    finally:
        sys.path.pop(0)
    return rule_rows


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


def def_row(symbol, rule_id, severity, summary):
    head = f"CAPGUARD_RULE({symbol}, {cpp_string(rule_id)}, {severity.capitalize()},"
    if len(head) + len(cpp_string(summary)) + 2 <= 100:  # the repository's line length
        return f"{head} {cpp_string(summary)})\n"
    return f"{head}\n    {cpp_string(summary)})\n"


def add_def_row(text, row, before_id):
    """rules.def with `row` inserted before the row of `before_id` (None: after the last row)."""
    if before_id is not None:
        anchor = re.search(rf'^CAPGUARD_RULE\(k\w+, "{re.escape(before_id)}",', text, re.M)
        at = anchor.start() if anchor else -1
    else:
        at = text.rfind("\n\n#undef CAPGUARD_RULE")
        at = at + 1 if at >= 0 else -1
    if at < 0:
        raise Refused(f"{DEF}: no place for the row (before {before_id or '#undef'})")
    return text[:at] + row + text[at:]


def readme_with_table(readme, table):
    """README.md with its rule table (from its header row to the blank line) replaced."""
    start = readme.find(table.splitlines()[0] + "\n")
    if start < 0:
        raise Refused("README.md: the rule table's header row was not found")
    end = readme.find("\n\n", start)
    end = len(readme) if end < 0 else end + 1
    return readme[:start] + table + readme[end:]


def docs_with_tables(rule_rows, docs, rows, options):
    """docs/rules.md with its generated tables (the rules, their options) replaced."""
    try:
        return rule_rows.docs_with_tables(docs, rule_rows.docs_tables(rows, options))
    except ValueError as missing:
        raise Refused(str(missing)) from None


# --- generated files -------------------------------------------------------------------------

def rule_source(rule_id, symbol, summary):
    return f"""// {rule_id}: {summary}
//
// TODO(add_rule.py): generated skeleton. Decide which calls this rule reports (rules/rule.h:
// key on the API kind and CUDA's result, take context from the capture model), fill the
// Draft, write the explanation and the fix below, and move its row in rules/rules.def if
// another rule must get the call first. Until then it reports nothing.
#include "rules/rule.h"

namespace capguard::rules {{
namespace {{

bool check_call(const Call& /*call*/, const CaptureModel& /*model*/, Draft& /*draft*/) {{
  return false;  // TODO(add_rule.py): true after filling `draft` for a call this rule reports
}}

// Capture rehearsal (capguard run --rehearse): whether a capture of a region the program ran
// eagerly would break at this call, from what the rehearsal model saw (model/rehearsal.h).
// Every rule with one is asked, in table order (rules/rehearsal.cpp); set on_rehearsal to
// nullptr below if a rehearsal cannot tell.
bool rehearse(const RehearsalFacts& /*facts*/, RehearsalWords& /*words*/) {{
  return false;  // TODO(add_rule.py): true after setting `words` (consequence, category)
}}

}}  // namespace

extern const Rule {symbol};
constinit const Rule {symbol}{{
    RuleId::{symbol},  // its rules/rules.def row: id, severity, summary
    {{"TODO(add_rule.py): what happens, a minimal example, and the fix.",
     "TODO(add_rule.py): the fix, in one line"}},
    &check_call,
    nullptr,  // on_open
    nullptr,  // on_graph
    Accepts::AnyCall,
    &rehearse}};

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


# --- synthetic recorded traces -------------------------------------------------------------

SYNTHETIC_NOTE = ("synthetic trace written by scripts/add_rule.py, not recorded on a GPU: "
                  "replace it with a recording (scripts/gpu_testcases.sh)")
PROGRAM_BASE = 0x100000  # where the synthetic program is mapped; its frames live in .symbols
STREAM, GRAPH = 0x5000, 0x6000


def format_header(root=os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)):
    """(tool version, format version) as trace/format.h declares them: the format the synthetic
    traces are written in is the current one."""
    with open(os.path.join(root, "trace", "format.h"), encoding="utf-8") as f:
        text = f.read()
    tool = re.search(r'kToolVersion\[\] = "([^"]+)"', text)
    version = re.search(r"kFormatVersion = (\d+);", text)
    if not tool or not version:
        raise Refused("trace/format.h: kToolVersion or kFormatVersion not found")
    return tool.group(1), int(version.group(1))


TOOL_VERSION, FORMAT_VERSION = format_header()


def escaped(text):
    """The trace grammar's escaping (trace/format.h): bytes outside 0x21..0x7e and '%' as %XX."""
    return "".join(chr(b) if 0x21 <= b <= 0x7E and b != 0x25 else f"%{b:02X}"
                   for b in text.encode())


def synthetic_trace(program, source_path, source):
    """(trace, symbols) for the testcase `program` (a name of testcases/recorded/traces/):
    the calls of the generated testcase, written by hand in the trace grammar (the current
    format, trace/format.h) as the
    interposer would, with the frames in a .symbols cache so that no binary is needed. The
    culprit line's call is the placeholder launch: edit the records to make the mistake."""
    lines = source.splitlines()

    def line_of(needle):
        return next(i + 1 for i, text in enumerate(lines) if needle in text and "warm_up" not in text)

    module = f"/synthetic/testcases/{program}"
    calls = [  # api, line, fields: the capture of the generated program, in order
        ("cudaStreamBeginCapture", line_of("cudaStreamBeginCapture"),
         f"st={STREAM:x} sf=1 sb=0 sa=1 ci=1 md=0 dm=0"),
        ("cudaLaunchKernel", line_of("LAUNCH_BUMP(args, stream)"),
         f"st={STREAM:x} sf=1 sb=1 sa=1 ci=1 dm=0"),
        ("cudaStreamEndCapture", line_of("cudaStreamEndCapture"),
         f"st={STREAM:x} sf=1 sb=1 sa=0 ci=1 gr={GRAPH:x} nd=1 dm=0"),
    ]
    trace = [f"v {TOOL_VERSION} {FORMAT_VERSION}", "p 1 0 0", "c " + escaped(SYNTHETIC_NOTE),
             f"m {PROGRAM_BASE:x} {PROGRAM_BASE:x} {PROGRAM_BASE + 0x10000:x} {escaped(module)}",
             # capguard attached, as every recording says: a trace without it fails the gate.
             "i ok cupti"]
    symbols = ["capguard-symbols\t1"]
    for i, (api, line, fields) in enumerate(calls, start=1):
        in_cudart = PROGRAM_BASE + 0x8000 + 0x100 * i  # the static cudart's entry point
        in_main = PROGRAM_BASE + 0x1000 + 0x10 * i    # the return address on `line` of main
        trace += [f"s {i:x} {in_cudart:x} {in_main:x}", f"e {i:x} {i:x} 1 {api} 0 {i:x} {fields}"]
        symbols += [f"1\t{in_cudart:x}\t0\t{module}\t{api}\t",
                    f"1\t{in_main:x}\t{line}\t{module}\tmain\t{source_path}"]
    trace.append(f"z {len(calls) + 1:x} 0")
    return "\n".join(trace) + "\n", "\n".join(symbols) + "\n"


def synthetic_recordings(snake, sources):
    """Path -> text of the synthetic traces of the testcase pair, static and shared cudart."""
    out = {}
    for stem, twin in ((snake, False), (snake + "_ok", True)):
        source_path = f"testcases/{stem}.cu"
        for program in (stem, stem + "_shared"):
            trace, symbols = synthetic_trace(program, source_path, sources[source_path])
            folder = f"testcases/recorded/traces/{program}"
            out[f"{folder}/capguard.1.trace"] = trace
            out[f"{folder}/capguard.1.trace.symbols"] = symbols
    return out


# --- main ----------------------------------------------------------------------------------

def add_rule(root, rule_id, severity, summary):
    if not ID_PATTERN.match(rule_id):
        raise Refused(f"{rule_id!r} is not a kebab-case id of two words or more (my-rule-id)")
    if not summary.strip() or "\n" in summary or "|" in summary:
        raise Refused("the summary must be one non-empty line without '|'")
    snake, symbol = names(rule_id)
    created = {
        f"rules/{snake}.cpp": rule_source(rule_id, symbol, summary),
        f"tests/rule_{snake}_test.cpp": test_source(rule_id),
        f"testcases/{snake}.cu": testcase_source(rule_id, summary, twin=False),
        f"testcases/{snake}_ok.cu": testcase_source(rule_id, summary, twin=True),
    }
    created.update(synthetic_recordings(snake, created))
    rule_rows = rule_rows_module(root)
    definitions = read(root, DEF)
    rows = rule_rows.parse(definitions)
    if not rows:
        raise Refused(f"{DEF}: no rows were read")
    if any(row.id == rule_id or row.symbol == symbol for row in rows):
        raise Refused(f"rule {rule_id} already exists")
    for path in created:
        if os.path.exists(os.path.join(root, path)):
            raise Refused(f"{path} already exists")
    index = insertion_index([(row.id, row.severity) for row in rows], severity)
    if index == 0:
        raise Refused("a rule cannot go before every other rule")
    before_id = rows[index].id if index < len(rows) else None
    new_definitions = add_def_row(definitions, def_row(symbol, rule_id, severity, summary),
                                  before_id)
    new_rows = rule_rows.parse(new_definitions)
    if [row.id for row in new_rows] != [row.id for row in rows[:index]] + [rule_id] + [
            row.id for row in rows[index:]]:
        raise Refused(f"{DEF}: the new row did not read back in its place")
    readme = readme_with_table(read(root, "README.md"), rule_rows.readme_table(new_rows))
    docs = docs_with_tables(rule_rows, read(root, rule_rows.DOCS), new_rows,
                            rule_rows.parse_options(new_definitions))

    # Everything checked: write.
    for path, text in created.items():
        os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
        write(root, path, text, create=True)
    write(root, DEF, new_definitions)
    write(root, "README.md", readme)
    write(root, rule_rows.DOCS, docs)
    clang_format = shutil.which("clang-format")
    if clang_format:
        cpp = [os.path.join(root, p) for p in created if p.endswith(".cpp")]
        subprocess.run([clang_format, "-i"] + cpp, check=False)
    return list(created) + [DEF, "README.md (generated rule table)",
                            f"{rule_rows.DOCS} (generated rule tables)"]


def regenerate_tables(root):
    """README.md's rule table and docs/rules.md's tables from rules.def; the files changed."""
    rule_rows = rule_rows_module(root)
    rows = rule_rows.rows(root)
    touched = []
    readme = read(root, "README.md")
    new = readme_with_table(readme, rule_rows.readme_table(rows))
    docs = read(root, rule_rows.DOCS)
    new_docs = docs_with_tables(rule_rows, docs, rows, rule_rows.options(root))
    if new != readme:
        write(root, "README.md", new)
        touched.append("README.md (generated rule table)")
    if new_docs != docs:
        write(root, rule_rows.DOCS, new_docs)
        touched.append(f"{rule_rows.DOCS} (generated rule tables)")
    return touched


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rule_id", nargs="?", help="kebab-case id, e.g. my-rule-id")
    parser.add_argument("--severity", choices=SEVERITIES)
    parser.add_argument("--summary", help="one line, as `capguard rules` prints it")
    parser.add_argument("--tables", "--readme", dest="tables", action="store_true",
                        help="only regenerate the rule tables of README.md and docs/rules.md "
                             "from rules/rules.def")
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="the source tree to change (default: this script's)")
    args = parser.parse_args()
    if not args.tables and (args.rule_id is None or args.severity is None or args.summary is None):
        parser.error("a rule id, --severity and --summary are needed (or --tables alone)")
    try:
        if args.tables:
            touched = regenerate_tables(args.root)
        else:
            touched = add_rule(args.root, args.rule_id, args.severity, args.summary)
    except Refused as refusal:
        print(f"add_rule.py: {refusal}; nothing was changed", file=sys.stderr)
        return 1
    for path in touched:
        print(path)
    if not args.tables:
        print("next: fill in every TODO(add_rule.py) (grep -rn 'TODO(add_rule.py)'); make the "
              "synthetic traces in testcases/recorded/traces/ show the mistake (trace/format.h), "
              "write their golden reports (testcases/check_golden.py --update), and later "
              "replace them with a GPU recording (testcases/README.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
