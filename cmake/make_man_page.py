#!/usr/bin/env python3
"""Writes capguard.1 from the built executable: help2man reads `capguard --help` and
`capguard --version`; the COMMANDS section is each subcommand's --help and RULES is `capguard
rules`, turned into man's own paragraphs (.TP), so that man wraps them to the reader's width
(80 columns included) instead of printing CLI11's long lines verbatim. CLI11's type notation
(`TEXT:{a,b}=a`, `INT:INT in [1 - 255]=1`) is written as a reader expects it.

A cross-built capguard (cmake/aarch64-linux-gnu.cmake) runs under its emulator: EMULATOR, the
build's CMAKE_CROSSCOMPILING_EMULATOR, is put before it, through a script named capguard that
help2man runs.

Usage: make_man_page.py CAPGUARD HELP2MAN OUTPUT [EMULATOR...]"""

import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "scripts"))
import env_rows  # noqa: E402

COMMANDS = ["run", "report", "rules", "explain", "suppressions"]
COLUMN = 30  # CLI11's option column (CLI::Formatter's column_width)

# ENVIRONMENT: first the rows of util/env.def, the one list of CAPGUARD_* variables (read through
# scripts/env_rows.py, as docs/environment.md's table is), then the other variables capguard reads.
ENVIRONMENT = [
    ("DEBUGINFOD_URLS", "with --debuginfod, the servers asked for missing separate debug files."),
    ("TMPDIR", "where `capguard run` makes its temporary trace directory (default /tmp)."),
    ("CUDA_HOME, CUDA_PATH",
     "toolkits where the CUPTI library (libcupti.so.12 or .13) is looked for after the library "
     "path, and then /usr/local/cuda-N and /usr/local/cuda (CAPGUARD_CUPTI names one instead)."),
    ("LD_PRELOAD, CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH",
     "set by `capguard run` for the program (NVTX_INJECTION64_PATH with --rehearse): how "
     "libcapguard.so is loaded. `run --rehearse` refuses to run when NVTX_INJECTION64_PATH "
     "already names another tool."),
]

EXAMPLES = [
    ("capguard run -- ./app_tests",
     "run a program, print the findings, exit 1 on an error finding."),
    ("capguard run -- python train.py", "the same for a PyTorch, CuPy or JAX script."),
    ("capguard run --fail-fast -o sarif:capguard.sarif -- ./app_tests",
     "in CI: stop at once where there is no GPU, and write a SARIF report."),
    ("capguard run -o junit:capguard.xml -- pytest --capguard tests/",
     "name the test each finding was made in (the capguard-cuda Python package)."),
    ("capguard run --trace-dir traces -- ./app; capguard report traces/",
     "keep the traces and analyze them again, also on a machine without a GPU."),
    ("capguard run --rehearse decode -- python serve.py",
     "judge the NVTX range \"decode\" as if it were captured, before capturing it."),
    ("capguard explain unjoined-fork", "what a rule means and how to fix it."),
]


def roff(text):
    """Text as roff shows it: backslashes and leading dots or quotes escaped."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r"^([.'])", r"\\&\1", text, flags=re.M)


def readable_type(type_):
    """CLI11's `TEXT:{a,b}=a` -> (`{a,b}`, `a`); `INT:INT in [1 - 255]=1` -> (`N`, `1`)."""
    default = None
    # Only CLI11's own types carry a default after '='; a type name may hold one (RULE.NAME=VALUE).
    with_default = re.match(r"^((?:TEXT|INT|UINT|FLOAT)\b.*?)=([^=]+)$", type_)
    if with_default:
        type_, default = with_default.groups()
    type_ = re.sub(r"^(TEXT|INT|UINT|FLOAT):", "", type_)
    type_ = re.sub(r"^INT in \[(\d+) - (\d+)\]$", r"N", type_)
    type_ = type_.replace(" REQUIRED", "").replace("TEXT ...", "...").strip()
    return type_, default


def option_paragraph(name, description):
    flags, _, type_ = name.partition(" ")
    type_, default = readable_type(type_)
    flag_text = ", ".join("\\fB" + roff(f) + "\\fR" for f in flags.split(","))
    head = flag_text + (" \\fI" + roff(type_) + "\\fR" if type_ else "")
    if default is not None and default != "":
        description += " (default: " + default + ")"
    return ".TP\n" + head + "\n" + roff(description) + "\n"


def command_section(help_text):
    """One subcommand's --help as roff: the summary, the usage line, each option a .TP."""
    out, entry = [], None

    def flush():
        nonlocal entry
        if entry:
            out.append(option_paragraph(entry[0], " ".join(entry[1]).strip()))
        entry = None

    for line in help_text.splitlines():
        if not line.strip():
            continue
        if line.startswith(" " * COLUMN) and entry:
            entry[1].append(line.strip())
        elif line.startswith("  "):
            flush()
            # CLI11 pads the name to the column and puts the description after it; a longer
            # name gets the line to itself (its description follows, indented).
            gap = re.search(r"\S(\s{2,})\S", line[2:])
            if gap and gap.end(1) + 2 == COLUMN:
                name, description = line[:COLUMN].strip(), line[COLUMN:].strip()
            else:
                name, description = line.strip(), ""
            entry = [name, [description]]
        elif line.endswith(":") and not line.startswith("Usage"):
            flush()
            out.append(".PP\n\\fI" + roff(line) + "\\fR\n")
        else:
            flush()
            if line.startswith("Usage: "):
                line = "Usage: \\fB" + roff(line[7:].split(" [")[0]) + "\\fR" + \
                       roff(line[7 + len(line[7:].split(" [")[0]):])
                out.append(".PP\n" + line + "\n")
            else:
                out.append(".PP\n" + roff(line) + "\n")
    flush()
    return "".join(out)


def rules_section(rules_text):
    out = [".PP\n\\fBcapguard explain\\fR \\fIRULE\\fR prints what a rule means and its fix.\n"]
    for line in rules_text.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3:
            out.append(".TP\n\\fB" + roff(parts[0]) + "\\fR (" + parts[1] + ")\n" +
                       roff(parts[2]) + "\n")
    return "".join(out)


def run(capguard, *args):
    env = dict(os.environ, PATH=os.path.dirname(capguard) + os.pathsep + os.environ["PATH"])
    return subprocess.run([capguard, *args], env=env, check=True, capture_output=True,
                          text=True).stdout


def main():
    if len(sys.argv) < 4:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    capguard, help2man, output = sys.argv[1:4]
    emulator = sys.argv[4:]
    if emulator:
        with tempfile.TemporaryDirectory() as wrapper_dir:
            # help2man runs the name it is given from PATH: a script of that name.
            wrapper = os.path.join(wrapper_dir, "capguard")
            with open(wrapper, "w") as f:
                f.write("#!/bin/sh\nexec " + shlex.join([*emulator, os.path.abspath(capguard)]) +
                        ' "$@"\n')
            os.chmod(wrapper, 0o755)
            return write_man_page(wrapper, help2man, output)
    return write_man_page(capguard, help2man, output)


def write_man_page(capguard, help2man, output):
    include = ["[COMMANDS]\n"]
    for command in COMMANDS:
        include.append('.SS "capguard ' + command + '"\n')
        include.append(command_section(run(capguard, command, "--help")))
    include.append("[RULES]\n" + rules_section(run(capguard, "rules")))
    include.append(
        "[EXIT STATUS]\n.TP\n0\nnothing at or above \\-\\-fail\\-on (run: the program's own "
        "status).\n.TP\n1\nfindings at or above \\-\\-fail\\-on (run: \\-\\-error\\-exitcode).\n"
        ".TP\n2\na usage error.\n.TP\n3\ncapguard could not attach, or found no GPU with "
        "\\-\\-fail\\-fast (run), or a trace could not be read (report).\n")
    include.append("[ENVIRONMENT]\n" + "".join(
        ".TP\n.B " + row.name + "\n" + roff(f"{row.meaning} (read by {row.reader}; default: "
                                             f"{row.default}).") + "\n"
        for row in env_rows.rows()) + "".join(
        ".TP\n\\fB" + roff(name) + "\\fR\n" + roff(text) + "\n" for name, text in ENVIRONMENT))
    include.append("[EXAMPLES]\n" + "".join(
        ".TP\n\\fB" + roff(command) + "\\fR\n" + roff(text) + "\n" for command, text in EXAMPLES))
    include.append(
        "[FILES]\n.TP\n\\fI/usr/lib/capguard/libcapguard.so\\fR\nthe library `capguard run` "
        "injects into the program, found in ../lib/capguard/ beside the executable's bin/.\n"
        ".TP\n\\fI/usr/lib/capguard/relink/\\fR\nwhat relinking capguard with another libdw "
        "needs (LGPL\\-3).\n"
        "[SEE ALSO]\nThe README and the manual (docs/index.md) in /usr/share/doc/capguard\\-cuda "
        "have the full documentation.\n")
    path = output + ".h2m"
    with open(path, "w") as f:
        f.write("".join(include))
    env = dict(os.environ, PATH=os.path.dirname(capguard) + os.pathsep + os.environ["PATH"])
    subprocess.run([help2man, "--no-info", "--no-discard-stderr", "--section=1",
                    "--name=finds the mistakes that break CUDA stream capture",
                    "--include=" + path, "--output=" + output, os.path.basename(capguard)],
                   env=env, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
