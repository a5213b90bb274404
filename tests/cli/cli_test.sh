#!/usr/bin/env bash
# End-to-end tests of the capguard command line: bad input of every kind gets one clear line
# and the documented exit status; `run` keeps the program's behaviour and the env contract.
# Usage: cli_test.sh PATH/TO/capguard   (libcapguard.so is expected next to it)
set -uo pipefail
capguard=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# `run` says first, before the program starts, what this machine lacks (no driver, no GPU):
# then one line more.
preflight_lines=0
python3 -c 'import ctypes, glob, os, sys; ctypes.CDLL("libcuda.so.1"); sys.exit(not (glob.glob("/dev/nvidia[0-9]*") or os.path.exists("/dev/dxg")))' 2>/dev/null ||
  preflight_lines=1

# expect STATUS STDERR_REGEX [--one-line|--run-line] -- COMMAND...: checks the exit status and
# that the last line on stderr matches (and, with --one-line, that it is the only line; with
# --run-line, that it is the only one after run's preflight line, where this machine has one).
expect() {
  local status=$1 pattern=$2 one_line=0 extra=0
  shift 2
  [ "$1" = --one-line ] && one_line=1 && shift
  [ "$1" = --run-line ] && one_line=1 && extra=$preflight_lines && shift
  shift  # --
  "$@" >"$work/out" 2>"$work/err"
  local got=$?
  local last
  last=$(tail -n 1 "$work/err")
  if [ "$got" != "$status" ]; then
    fail "$* -> exit $got, expected $status; stderr:"; sed 's/^/    /' "$work/err"
  elif ! grep -Eq -- "$pattern" <<<"$last"; then
    fail "$* -> last stderr line '$last' does not match '$pattern'"
  elif [ $one_line = 1 ] && [ "$(wc -l <"$work/err")" != $((1 + extra)) ]; then
    fail "$* -> expected $((1 + extra)) line(s) on stderr, got:"; sed 's/^/    /' "$work/err"
  elif [ $extra = 1 ] && ! head -n 1 "$work/err" | grep -q '^capguard: warning: before starting the program: '; then
    fail "$* -> the first line is not run's preflight check:"; sed 's/^/    /' "$work/err"
  else
    echo "ok: $* -> $got"
  fi
}

# --- traces written by hand per trace/format.h ---
t=$work/traces
mkdir -p "$t/dir"
header='v 0.1.0 1\np 1e240 1 0\nc ./app\ni ok attached\n'
# A synchronize inside a capture: CUDA returned 900 (0x384), then 901 (0x385) at EndCapture.
printf "$header"'e 1 a 1e241 cudaStreamBeginCapture 0 0 st=5000 sf=1 sb=0 sa=1 ci=1 md=0\n'\
'e 2 14 1e241 cudaStreamSynchronize 384 0 st=5000 sf=1 sb=1 sa=2 ci=1\n'\
'e 3 1e 1e241 cudaStreamEndCapture 385 0 st=5000 sf=1 sb=2 sa=0 ci=1\nz 28 0\n' >"$t/sync.trace"
printf "$header"'z 28 0\n' >"$t/clean.trace"
: >"$t/empty.trace"
# Random bytes, the first one fixed: a leading newline would make the first line empty (1 in 256).
{ printf '\x01'; head -c 511 /dev/urandom; } >"$t/random.trace"
head -c 150 "$t/sync.trace" >"$t/truncated.trace"  # cut inside the first event
printf 'v 9.0.0 a\np 1 1 0\n' >"$t/newer.trace"
cp "$t/sync.trace" "$t/clean.trace" "$t/dir/"

echo "== report: bad input"
expect 3 '^capguard: cannot read trace: .*empty' --one-line -- "$capguard" report "$t/empty.trace"
expect 3 '^capguard: cannot read trace: .*not a capguard trace' --one-line -- "$capguard" report "$t/random.trace"
expect 3 '^SUMMARY: capguard: 0 errors' -- "$capguard" report "$t/truncated.trace"
grep -q '^capguard: cannot read trace: .*truncated' "$work/err" || fail "truncated trace not named"
expect 3 '^capguard: cannot read trace: .*format 10.*upgrade capguard' --one-line -- "$capguard" report "$t/newer.trace"
expect 3 '^capguard: cannot open trace: .*/missing.trace: No such file' --one-line -- "$capguard" report "$t/missing.trace"
expect 3 '^capguard: cannot open trace: no \*\.trace files in' --one-line -- "$capguard" report "$work"
# A bad trace among good ones: the bad one is named, the good one still reported, SUMMARY last.
expect 3 '^SUMMARY: capguard: 1 error' -- "$capguard" report "$t/sync.trace" "$t/empty.trace"
grep -q '^capguard: cannot read trace: .*empty' "$work/err" || fail "bad trace not named beside a good one"
grep -q 'ERROR: capguard: sync-during-capture' "$work/err" || fail "good trace not reported beside a bad one"

echo "== wrong command lines"
expect 2 '^capguard: .*subcommand is required' --one-line -- "$capguard"
expect 2 '^capguard: .*--bogus' --one-line -- "$capguard" report --bogus "$t/sync.trace"
expect 2 '^capguard: .*traces is required' --one-line -- "$capguard" report
expect 2 '^capguard: --format: xml not in' --one-line -- "$capguard" report --format xml "$t/sync.trace"
expect 2 '^capguard: --fail-on: sometimes not in' --one-line -- "$capguard" report --fail-on sometimes "$t/sync.trace"
expect 2 '^capguard: unknown rule .no-such-rule.; known rules: sync-during-capture, ' --one-line -- "$capguard" explain no-such-rule
expect 2 '^capguard: .*write: capguard run \[options\] -- PROGRAM' --one-line -- "$capguard" run /bin/sh -c true
# An exit status wraps modulo 256 in the shell: 256 would turn a failing gate into a pass.
for code in 0 256 300 -1 x; do
  expect 2 '^capguard: --error-exitcode: .*(not in range|failed)' --one-line -- "$capguard" run --error-exitcode "$code" -- /bin/true
done

echo "== report: findings and exit status"
expect 1 '^SUMMARY: capguard: 1 error, 0 warnings, 0 notes in 1 process \(1 capture: 1 invalidated\)' -- "$capguard" report "$t/sync.trace"
grep -q '^==123456==ERROR: capguard: sync-during-capture$' "$work/err" || fail "no sanitizer heading"
expect 0 '^SUMMARY: capguard: 1 error' -- "$capguard" report --fail-on never "$t/sync.trace"
expect 0 '^SUMMARY: capguard: 0 errors' -- "$capguard" report "$t/clean.trace"
expect 1 'in 2 processes' -- "$capguard" report "$t/dir"

echo "== report: the gate fails closed (docs/security.md)"
# No end record: killed, crashed, still running or cut; a report that would pass exits 3.
printf "$header" >"$t/noend.trace"
expect 3 '^SUMMARY: capguard: 0 errors' -- "$capguard" report "$t/noend.trace"
grep -q 'noend.trace) has no end record' "$work/err" || fail "a trace without end record not named"
# Findings fail the gate anyway (a program that aborts after its mistake): 1, with a warning.
grep -v '^z ' "$t/sync.trace" >"$t/sync_noend.trace"
expect 1 '^SUMMARY: capguard: 1 error' -- "$capguard" report "$t/sync_noend.trace"
grep -q '^capguard: warning: .*has no end record' "$work/err" || fail "missing end record not a warning"
expect 0 '^SUMMARY: capguard: 0 errors' -- "$capguard" report --fail-on never -o "json:$t/noend.json" "$t/noend.trace"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["problems"]; assert [x["level"] for x in p] == ["warning"] and "no end record" in p[0]["message"], p' "$t/noend.json" || fail "report --fail-on never: the missing end record is not in the report"
# capguard never attached: 3, whatever later records say.
printf 'v 0.1.0 1\np 1e240 1 0\nc ./app\ni failed no CUPTI\ni ok attached\nz 28 0\n' >"$t/failed.trace"
expect 3 '^SUMMARY: capguard: 0 errors' -- "$capguard" report "$t/failed.trace"
grep -q 'cannot attach to process 123456 ' "$work/err" || fail "not attached not said"
# -o naming an input (directly, through a link, or inside a directory given): usage, untouched.
cp "$t/clean.trace" "$t/keep.trace"
ln -sf "$t/keep.trace" "$t/keep-link.json"
expect 2 'one of the input traces' --one-line -- "$capguard" report -o "json:$t/keep.trace" "$t/keep.trace"
expect 2 'one of the input traces' --one-line -- "$capguard" report -o "json:$t/keep-link.json" "$t/keep.trace"
expect 2 'one of the input traces' --one-line -- "$capguard" report -o "$t/dir/clean.trace" "$t/dir"
cmp -s "$t/clean.trace" "$t/keep.trace" || fail "an input trace was overwritten"
# A FIFO named as a trace is refused at once, never waited on.
mkfifo "$t/fifo.trace"
expect 3 'cannot open trace: .*fifo.trace: a FIFO' --one-line -- timeout 10 "$capguard" report "$t/fifo.trace"
rm -f "$t/fifo.trace" "$t/keep-link.json"
# capguard's own lines quote argv escaped: a newline in an argument forges no SUMMARY line.
expect 2 '^capguard: program not found: .*\\x0aSUMMARY: capguard: 0 errors' --one-line -- "$capguard" run -- "$work/none"$'\n''SUMMARY: capguard: 0 errors'
expect 1 '^SUMMARY: capguard: 1 error' -- "$capguard" report -o "json:$t/r.json" -o "sarif:$t/r.sarif" -o "junit:$t/r.xml" "$t/sync.trace"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["tool"] == "capguard" and d["summary"]["errors"] == 1 and d["findings"][0]["rule"] == "sync-during-capture" and d["findings"][0]["result"] == "cudaErrorStreamCaptureUnsupported", d' "$t/r.json" || fail "JSON report"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))["runs"]' "$t/r.sarif" || fail "SARIF report is not JSON"
python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$t/r.xml" || fail "JUnit report is not XML"
expect 1 '^SUMMARY: capguard: 1 error' -- "$capguard" report -o "html:$t/r.html" -o "dot:$t/r.dot" "$t/sync.trace"
grep -q '^<!DOCTYPE html>' "$t/r.html" && grep -q 'id="capture-1"' "$t/r.html" || fail "HTML report"
grep -q '^digraph "finding 1: sync-during-capture"' "$t/r.dot" || fail "DOT report"
"$capguard" report --format html --no-source -o - "$t/sync.trace" >"$work/stdout.html" 2>/dev/null
grep -q '<svg class="capture-graph"' "$work/stdout.html" || fail "--format html -o - has no capture picture"
ls "$t"/*.tmp.* 2>/dev/null && fail "temporary output files left behind"
"$capguard" report --format json -o - "$t/sync.trace" >"$work/stdout.json" 2>/dev/null
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/stdout.json" || fail "-o - did not write JSON to stdout"
expect 2 '^capguard: cannot write report .*/no/such/dir/r.json' -- "$capguard" report -q -o "json:$t/no/such/dir/r.json" "$t/clean.trace"

echo "== -o never destroys what is at the path"
valid_json() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1"; }
echo old >"$t/real.json" && ln -s real.json "$t/link.json"
expect 0 '' -- "$capguard" report -q -o "json:$t/link.json" "$t/clean.trace"
[ -L "$t/link.json" ] || fail "-o replaced a symlink instead of the file it names"
valid_json "$t/real.json" || fail "-o through a symlink did not write the file it names"
ln -s new.json "$t/dangling.json"
expect 0 '' -- "$capguard" report -q -o "json:$t/dangling.json" "$t/clean.trace"
[ -L "$t/dangling.json" ] && valid_json "$t/new.json" || fail "-o through a dangling symlink"
mkfifo "$t/fifo"
cat "$t/fifo" >"$work/fifo.out" &
expect 0 '' -- "$capguard" report -q -o "json:$t/fifo" "$t/clean.trace"
wait
[ -p "$t/fifo" ] || fail "-o replaced a FIFO by a file"
valid_json "$work/fifo.out" || fail "-o into a FIFO: the reader got no report"
if mknod "$work/null" c 1 3 2>/dev/null; then  # /dev/null's twin, where we may make one (root)
  expect 0 '' -- "$capguard" report -q -o "json:$work/null" "$t/clean.trace"
  [ -c "$work/null" ] || fail "-o replaced a character device by a file"
else
  echo "skip: -o into a character device (cannot mknod here)"
fi
"$capguard" report -q -o json:/dev/stdout "$t/clean.trace" >"$work/devstdout.json"
valid_json "$work/devstdout.json" || fail "-o json:/dev/stdout did not write to stdout"
mkdir "$t/adir"
expect 2 '^capguard: cannot write report .*/adir: Is a directory' -- "$capguard" report -q -o "json:$t/adir" "$t/clean.trace"
# A report that cannot be written is an error (exit 2), to stdout as to a file.
expect 2 '^capguard: cannot write report to stdout: No space left on device' -- sh -c '"$0" report -q --format json -o - "$1" >/dev/full' "$capguard" "$t/clean.trace"
expect 2 '^capguard: cannot write report to stdout: Bad file descriptor' -- sh -c '"$0" report -q --format json -o - "$1" >&-' "$capguard" "$t/clean.trace"
# Two reports into one place, or a format that does not exist, are usage errors.
expect 2 '^capguard: --output sarif:.*/same: .* is already the destination of another -o' --one-line -- "$capguard" report -o "json:$t/same" -o "sarif:$t/same" "$t/clean.trace"
expect 2 '^capguard: --output json:-: stdout is already the destination' --one-line -- "$capguard" report -o - -o json:- "$t/clean.trace"
expect 2 '^capguard: --output xml:r.xml: unknown format xml' --one-line -- "$capguard" report -o xml:r.xml "$t/clean.trace"
[ -e xml:r.xml ] && fail "wrote a file named xml:r.xml"

echo "== hostile traces"
# The same trace twice is one process; two traces of one pid (two hosts) are two processes.
expect 1 '^SUMMARY: capguard: 1 error, 0 warnings, 0 notes in 1 process \(1 capture' -- "$capguard" report "$t/sync.trace" "$t/sync.trace" "$t/../traces/sync.trace"
[ "$(grep -c 'ERROR: capguard: sync-during-capture' "$work/err")" = 1 ] || fail "the same trace twice: finding printed more than once"
mkdir -p "$t/host_a" "$t/host_b" && cp "$t/sync.trace" "$t/host_a/" && cp "$t/sync.trace" "$t/host_b/"
expect 1 '^SUMMARY: capguard: 2 errors, 0 warnings, 0 notes in 2 processes' -- "$capguard" report -o "junit:$t/hosts.xml" "$t/host_a" "$t/host_b"
[ "$(grep -c 'ERROR: capguard: sync-during-capture' "$work/err")" = 2 ] || fail "two processes of one pid: findings and SUMMARY disagree"
[ "$(grep -c '<testsuite ' "$t/hosts.xml")" = 2 ] || fail "two processes of one pid: JUnit merged them into one suite"
# Text from a trace or .symbols file can neither cut the report nor forge lines nor drive the terminal.
printf "$header"'m 400000 400000 500000 /nonexistent/app\ns 1 400010\ne 1 a 1e241 cudaStreamBeginCapture 0 1 st=5000 sf=1 sb=0 sa=1 ci=1 md=0\ne 2 14 1e241 cudaStreamSynchronize 384 1 st=5000 sf=1 sb=1 sa=2 ci=1\ne 3 1e 1e241 cudaStreamEndCapture 385 0 st=5000 sf=1 sb=2 sa=0 ci=1\nz 28 0\n' >"$t/evil.trace"
printf 'capguard-symbols\t1\n1e240\t400010\t12\t/nonexistent/app\tmain\tapp\0cut.cu\n1e240\t400011\t9\t/nonexistent/app\tf\033[2J\tx\nSUMMARY: capguard: 0 errors.cu\n' >"$t/evil.trace.symbols"
expect 1 '^SUMMARY: capguard: 1 error' -- "$capguard" report "$t/evil.trace"
grep -q 'app\\x00cut.cu:12' "$work/err" || fail "a NUL in a file name is not shown escaped"
[ "$(grep -c '^SUMMARY' "$work/err")" = 1 ] || fail "a forged SUMMARY line"
LC_ALL=C grep -q $'[\001-\010\016-\037\033]' "$work/err" && fail "control characters reached the terminal"
tr -d '\000' <"$work/err" | cmp -s - "$work/err" || fail "a NUL byte reached stderr"
printf 'sync-during-capture:fun:ma\0in\033[2J\n' >"$t/evil.supp"
expect 1 '^SUMMARY: capguard: 1 error' -- "$capguard" report --suppressions "$t/evil.supp" "$t/sync.trace"
grep -q "unused suppression 'sync-during-capture:fun:ma\\\\x00in\\\\x1b\[2J' matched no finding" "$work/err" || fail "a suppressions line with NUL and ESC is not shown escaped"
LC_ALL=C grep -q $'[\001-\010\016-\037\033]' "$work/err" && fail "control characters from a suppressions file reached the terminal"
# One damaged line is skipped, named, and the rest of the trace still read.
sed '6i\
this line is damaged' "$t/sync.trace" >"$t/damaged.trace"
expect 3 '^SUMMARY: capguard: 1 error, 0 warnings, 0 notes in 1 process \(1 capture: 1 invalidated\)' -- "$capguard" report "$t/damaged.trace"
grep -q '^capguard: damaged trace line skipped: .*/damaged.trace:6: ' "$work/err" || fail "the damaged line is not named"
printf "$header"'e 1 a 1e241 cudaStreamBeginCapture 0 0 st=5000 sf=1 sb=0 sa=1 ci=1 md=0\ne 2\0 14 1e241 cudaLaunchKernel 0 0 st=5000\ne 3 1e 1e241 cudaStreamEndCapture 0 0 st=5000 sf=1 sb=1 sa=0 ci=1\nz 28 0\n' >"$t/nul.trace"
expect 3 '^SUMMARY: capguard: 0 errors, 0 warnings, 0 notes in 1 process \(1 capture: 1 ok\)' -- "$capguard" report "$t/nul.trace"
grep -q 'capture-never-ended' "$work/err" && fail "a NUL mid-trace made a capture look never ended"
printf "$header"'e 1 a 1e241 cudaStreamBeginCapture 0 7 st=5000 sf=1 sb=0 sa=1 ci=1 md=0\ne 2 14 1e241 cudaStreamSynchronize 384 7 st=5000 sf=1 sb=1 sa=2 ci=1\nz 28 0\n' >"$t/nostack.trace"
expect 1 '^SUMMARY: capguard: 1 error' -- "$capguard" report "$t/nostack.trace"
[ "$(grep -c 'warning: .*nostack.trace: stack ids that the trace never defines' "$work/err")" = 1 ] || fail "undefined stack ids not named once"
cp "$t/sync.trace" "$t/longsym.trace"
{ printf 'capguard-symbols\t1\n'; head -c 70000 /dev/zero | tr '\0' a; printf '\n'; } >"$t/longsym.trace.symbols"
expect 1 '^SUMMARY' -- "$capguard" report "$t/longsym.trace"
grep -q 'warning: ignoring .*longsym.trace.symbols:2: line is longer than' "$work/err" || fail ".symbols lines have no length limit"
# Entries named *.trace that cannot be traces are named, one line each.
mkdir -p "$t/odd" && cp "$t/clean.trace" "$t/odd/"
ln -s nowhere "$t/odd/dangling.trace" && ln -s loop.trace "$t/odd/loop.trace" && mkfifo "$t/odd/fifo.trace" && mkdir "$t/odd/sub.trace"
expect 0 '^SUMMARY: capguard: 0 errors' -- "$capguard" report "$t/odd"
for what in 'dangling.trace: a dangling symlink' 'loop.trace: a symlink loop' 'fifo.trace: a FIFO' 'sub.trace: a directory'; do
  grep -q "^capguard: warning: skipping .*/odd/$what\$" "$work/err" || fail "not named: $what"
done
# Running out of memory is a message and exit 3, with what was found before it: a finding, then
# 60,000 distinct 64-frame stacks (30 MB of them) under a 40 MB address-space limit.
python3 - "$t/sync.trace" "$t/flood.trace" <<'PY'
import sys
head = open(sys.argv[1]).read().replace("z 28 0\n", "")
frames = " ".join("%x" % (0x400000 + 16 * i) for i in range(64))
body = "".join("s %x %s\ne %x a 1e241 cudaStreamSynchronize 0 %x st=5000\n" % (i, frames, 10 + i, i)
               for i in range(1, 60001))
open(sys.argv[2], "w").write(head + body + "z 28 0\n")
PY
if (ulimit -v 40000 && "$capguard" report "$t/sync.trace" >/dev/null 2>&1; [ $? = 1 ]); then
  expect 3 '^SUMMARY: capguard: 1 error' -- sh -c 'ulimit -v 40000 && exec "$0" report "$1"' "$capguard" "$t/flood.trace"
  grep -q '^capguard: cannot read trace: .*flood.trace: out of memory while reading it' "$work/err" || fail "running out of memory is not said"
else
  echo "skip: capguard does not run under ulimit -v 40000 here (a sanitizer build?)"
fi
# Every requested report is written even when nothing could be read, and says why.
rm -f "$t/none".*
expect 3 '^capguard: cannot read trace: .*empty' --one-line -- "$capguard" report -o "sarif:$t/none.sarif" -o "junit:$t/none.xml" -o "json:$t/none.json" "$t/empty.trace"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][0]["invocations"][0]; assert not r["executionSuccessful"] and "empty" in r["toolExecutionNotifications"][0]["message"]["text"], r' "$t/none.sarif" || fail "SARIF without the reason nothing was read"
grep -q '<error message=".*empty' "$t/none.xml" || fail "JUnit without an error test case"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["problems"][0]["level"] == "error", d' "$t/none.json" || fail "JSON without the problem"
tests=$(cd "$(dirname "$0")/.." && pwd)
python3 "$tests/validate_sarif.py" "$tests/../docs/sarif-2.1.0.schema.json" "$t/none.sarif" >/dev/null || fail "SARIF with a problem is not valid SARIF"
python3 "$tests/validate_junit.py" "$t/none.xml" >/dev/null || fail "JUnit with a problem is not valid JUnit"

"$capguard" rules | grep -Eq '^sync-during-capture +error +' || fail "rules table"
"$capguard" explain sync-during-capture | grep -q '^fix: ' || fail "explain has no fix"
"$capguard" --version | grep -Eq '^capguard [0-9]+\.[0-9]+\.[0-9]+$' || fail "--version"

echo "== run"
if python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
  no_trace='the program never initialized CUDA'
else
  no_trace='no CUDA driver on this machine \(libcuda.so.1 not found\)'
fi
expect 3 "^capguard: cannot attach: $no_trace" --run-line -- "$capguard" run -- /bin/true
expect 1 "^capguard: warning: cannot attach: $no_trace \\(--no-require-attach\\)" --run-line -- "$capguard" run --no-require-attach -- /bin/false
# --fail-fast: where the check finds no GPU, the program is not started, the reports say why.
if [ $preflight_lines = 1 ]; then
  expect 3 '^capguard: cannot attach: no usable GPU here; the program was not started \(--fail-fast\)$' -- "$capguard" run --fail-fast -o "json:$work/ff.json" -- /bin/sh -c "touch '$work/ff-ran'"
  [ -e "$work/ff-ran" ] && fail "run --fail-fast started the program without a GPU"
  head -n 1 "$work/err" | grep -q '^capguard: warning: before starting the program: no CUDA driver .*: the program is not started (--fail-fast)$' ||
    fail "run --fail-fast: the first line does not say why: $(head -n 1 "$work/err")"
  python3 -c 'import json,sys; assert "--fail-fast" in json.load(open(sys.argv[1]))["problems"][0]["message"]' "$work/ff.json" ||
    fail "run --fail-fast: the JSON report does not say why nothing ran"
  # Said before the program starts: its output comes after the line.
  "$capguard" run -- /bin/sh -c 'echo program-started >&2' 2>"$work/order" >/dev/null
  [ "$(sed -n 2p "$work/order")" = program-started ] && head -n 1 "$work/order" | grep -q 'before starting the program' ||
    fail "the preflight line does not come before the program's output: $(cat "$work/order")"
else
  expect 3 "^capguard: cannot attach: $no_trace" --one-line -- "$capguard" run --fail-fast -- /bin/true
fi
# A real CUDA program (a testcase, when built): without a driver it still runs, prints what CUDA
# returned, and capguard fails closed.
cuda_program=$(dirname "$capguard")/testcases/sync_during_capture_ok
if [ -x "$cuda_program" ] && [ "$no_trace" != 'the program never initialized CUDA' ]; then
  expect 3 "^capguard: cannot attach: $no_trace" -- "$capguard" run -- "$cuda_program"
  grep -q 'cudaStreamCreateWithFlags' "$work/out" || fail "the CUDA program's own output is missing"
else
  echo "skip: real CUDA program without a driver (testcases not built, or a driver is present)"
fi
expect 2 '^capguard: program not found: /nonexistent$' --one-line -- "$capguard" run -- /nonexistent
expect 2 '^capguard: program not found: no-such-program-here \(not in PATH\)' --one-line -- "$capguard" run -- no-such-program-here
expect 2 '^capguard: cannot execute .*: it is a directory' --one-line -- "$capguard" run -- /

# A stand-in for an attached CUDA program: it writes the trace the interposer would write
# (so `run`'s plumbing is tested here, without a GPU), then exits as told.
fake=$work/fake_program.sh
cat >"$fake" <<FAKE
#!/bin/sh
lib=\${LD_PRELOAD%%:*}
[ -f "\$lib" ] && [ "\${lib#/}" != "\$lib" ] && [ "\$CUDA_INJECTION64_PATH" = "\$lib" ] || { echo "bad env" >&2; exit 99; }
case "\$LD_PRELOAD" in *:/keep/me.so) ;; *) echo "LD_PRELOAD lost: \$LD_PRELOAD" >&2; exit 98 ;; esac
cp "\$1" "\$CAPGUARD_TRACE_DIR/capguard.\$\$.trace"
echo "\$CAPGUARD_TRACE_DIR" >"$work/trace_dir_used"
read line && echo "stdin: \$line"
[ "\$2" = kill ] && kill -TERM \$\$
exit "\$2"
FAKE
chmod +x "$fake"
run_fake() { LD_PRELOAD=/keep/me.so "$capguard" run "$@"; }
echo hello | LD_PRELOAD=/keep/me.so "$capguard" run -- "$fake" "$t/clean.trace" 7 >"$work/stdout" 2>"$work/err"
[ $? = 7 ] || { fail "program's exit status not kept"; cat "$work/err"; }
grep -q '^stdin: hello$' "$work/stdout" || fail "stdin/stdout not inherited"
[ -e "$(cat "$work/trace_dir_used")" ] && fail "temporary trace dir not removed after a clean run"
expect 143 '^SUMMARY: capguard: 0 errors' -- run_fake -- "$fake" "$t/clean.trace" kill
expect 1 '^SUMMARY: capguard: 1 error' -- run_fake -- "$fake" "$t/sync.trace" 0
grep -q '^capguard: traces kept in .* (capguard report ' "$work/err" || fail "kept traces not named"
[ -e "$(cat "$work/trace_dir_used")" ] || fail "traces with findings were not kept"
expect 9 '^SUMMARY: capguard: 1 error' -- run_fake --error-exitcode 9 -- "$fake" "$t/sync.trace" 0
expect 5 '^SUMMARY: capguard: 1 error' -- run_fake --fail-on never --trace-dir "$work/kept" -- "$fake" "$t/sync.trace" 5
ls "$work"/kept/capguard.*.trace >/dev/null || fail "--trace-dir not kept"
# Not attached, even tolerated: every requested report is still written.
rm -f "$t/na.sarif"
expect 1 "^capguard: warning: cannot attach: $no_trace \\(--no-require-attach\\)" -- "$capguard" run --no-require-attach -o "sarif:$t/na.sarif" -- /bin/false
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][0]["invocations"][0]; assert r["toolExecutionNotifications"][0]["level"] == "warning", r' "$t/na.sarif" || fail "run without attaching wrote no SARIF"
# Without libcapguard.so: fail closed, or with --no-require-attach run the program anyway.
mkdir -p "$work/alone" && cp "$capguard" "$work/alone/capguard"
expect 3 '^capguard: cannot attach: libcapguard.so not found' -- "$work/alone/capguard" run -o "json:$t/alone.json" -- /bin/sh -c "touch '$work/ran'"
[ -e "$work/ran" ] && fail "the program ran although capguard could not attach (fail closed)"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["problems"]' "$t/alone.json" || fail "no report without libcapguard.so"
echo hi | "$work/alone/capguard" run --no-require-attach -- /bin/sh -c 'read l; echo "got $l"; exit 6' >"$work/out" 2>"$work/err"
[ $? = 6 ] && grep -q '^got hi$' "$work/out" || fail "--no-require-attach without libcapguard.so did not run the program"
grep -q '^capguard: warning: cannot attach: libcapguard.so not found.*(--no-require-attach)$' "$work/err" || fail "no warning without libcapguard.so"
printf 'v 0.1.0 1\np 1e240 1 0\nc ./app\ni failed CUPTI%%20already%%20in%%20use%%20by%%20another%%20subscriber\n' >"$t/taken.trace"
expect 3 '^SUMMARY: capguard: 0 errors' -- run_fake -- "$fake" "$t/taken.trace" 0
grep -q '^capguard: cannot attach to process 123456 (./app, .*/capguard\.[0-9]*\.trace): CUPTI already in use by another subscriber$' "$work/err" || fail "why not attached is not said"
# run checks the end record as report does (engine/gate.h): a trace cut short fails closed, and
# with --fail-on never it is a warning in the report, not only on stderr.
expect 3 '^SUMMARY: capguard: 0 errors' -- run_fake -o "json:$t/noend.json" -- "$fake" "$t/noend.trace" 0
grep -q '^capguard: the trace of process 123456 (./app, .*) has no end record' "$work/err" || fail "run: a trace without end record not named"
expect 0 '^SUMMARY: capguard: 0 errors' -- run_fake --fail-on never -o "json:$t/noend.json" -- "$fake" "$t/noend.trace" 0
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["problems"]; assert [x["level"] for x in p] == ["warning"] and "no end record" in p[0]["message"], p' "$t/noend.json" || fail "run --fail-on never: the missing end record is not in the report"

# --- The program's own CUPTI client (trace format 5, 'k' records): shared, the report says so
# and passes; capguard's subscription lost (CUPTI finalized behind its back), every format says
# what was not checked and the gate fails closed (exit 3), unless findings fail it anyway.
mkdir -p "$t/cupti-shared" "$t/cupti-lost"
# The text report's lines over 160 columns, joined again: a line at column 0 goes on in the lines
# indented by two spaces below it.
unwrap() {
  python3 -c 'import sys
out = []
for line in open(sys.argv[1]).read().split("\n"):
    if out and out[-1][:1] not in ("", " ") and line.startswith("  ") and line[2:3] != " ":
        out[-1] += " " + line[2:]
    else:
        out.append(line)
print("\n".join(out), end="")' "$1"
}
printf 'v 0.1.0 5\np 4d 1 0\nc python3%%20train.py\ni ok cupti\nk 10 4d forwarding /opt/torch/lib/libtorch_cpu.so\nk 20 4d left /opt/torch/lib/libtorch_cpu.so\nk 21 4d finalize /opt/torch/lib/libtorch_cpu.so\nz 99 0\n' >"$t/cupti-shared/capguard.77.trace"
expect 0 '^SUMMARY: capguard: 0 errors' -- "$capguard" report -o json:"$work/shared.json" "$t/cupti-shared"
grep -q "^note: process 77 shares CUPTI with PyTorch's profiler (kineto) in libtorch_cpu.so: capguard forwarded the callbacks it enabled; its cuptiFinalize (1x) ended its own subscription only$" <(unwrap "$work/err") || fail "the shared CUPTI client is not named"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["processes"][0]["cupti_clients"]; assert c == [{"name": "PyTorch'"'"'s profiler (kineto) in libtorch_cpu.so", "sharing": "forwarded", "subscriptions": 1, "finalize_calls_kept": 1, "refused": 0}], c' "$work/shared.json" || fail "JSON lacks cupti_clients"
printf 'v 0.1.0 5\np 4e 1 0\nc ./app\ni ok cupti\ne 1 100 4e cudaGetDevice 0 0\nk 10 4e forwarding ./libmyprof.so\ne 2 3b9aca64 4e cudaMalloc 0 0\nk 99 4e lost ./libmyprof.so\nz 99 0\n' >"$t/cupti-lost/capguard.78.trace"
expect 3 'SUMMARY: capguard: 0 errors' -- "$capguard" report -o json:"$work/lost.json" -o sarif:"$work/lost.sarif" -o junit:"$work/lost.xml" -o html:"$work/lost.html" "$t/cupti-lost"
grep -q '^==78==capguard: stopped watching: .*finalized by a call capguard could not intercept (last CUPTI client seen: libmyprof.so); nothing after its last recorded call (cudaMalloc, 1.000 s after the first) was checked$' <(unwrap "$work/err") || fail "text: the lost subscription is not said"
for f in lost.json lost.sarif lost.xml lost.html; do
  grep -q 'capguard could not intercept' "$work/$f" || fail "$f: the lost subscription is not said"
done
expect 0 'SUMMARY: capguard: 0 errors' -- "$capguard" report --fail-on never "$t/cupti-lost"
printf 'v 0.1.0 5\np 4f 1 0\nc ./app\ni ok cupti\nk 10 4f sideways x\n' >"$t/bad-k.trace"
expect 3 'SUMMARY' -- "$capguard" report "$t/bad-k.trace"
grep -q "cupti-client record: unknown CUPTI client event 'sideways'" "$work/err" || fail "a bad 'k' record is not named"

# --- Capture rehearsal (trace format 6, 'r'/'R' records): a region "step" run eagerly three
# times, each with a cudaStreamSynchronize of its stream; the first also allocates. The
# findings are marked rehearsed in every format, the verdict is printed, the gate fails.
mkdir -p "$t/rehearse"
{
  printf 'v 0.1.0 6\np 50 1 0\nc ./step\ni ok cupti\ne 1 1 50 cudaStreamCreateWithFlags 0 0 st=5000 fl=1\n'
  for i in 1 2 3; do
    printf 'r %x 10 50 %x  step\n' $((i * 10)) $i
    printf 'e %x 11 50 cudaLaunchKernel 0 0 st=5000\n' $((i * 10 + 1))
    [ $i = 1 ] && printf 'e %x 12 50 cudaMalloc 0 0\n' $((i * 10 + 2))
    printf 'e %x 13 50 cudaStreamSynchronize 0 0 st=5000\n' $((i * 10 + 3))
    printf 'R %x 14 50 %x\n' $((i * 10 + 4)) $i
  done
  printf 'z 99 0\n'
} >"$t/rehearse/capguard.80.trace"
expect 1 '^SUMMARY: capguard: 2 errors' -- "$capguard" report -o json:"$work/rh.json" -o sarif:"$work/rh.sarif" -o html:"$work/rh.html" "$t/rehearse"
grep -q '^==80==ERROR: capguard: sync-during-capture (rehearsed: would break a capture)$' "$work/err" || fail "rehearse: text heading does not say rehearsed"
grep -q '^  "step" (process 80, global mode, 3 executions): not capturable$' "$work/err" || fail "rehearse: verdict not printed"
grep -q '^      synchronize: cudaStreamSynchronize at .*\[sync-during-capture\], in 3 of 3 executions$' "$work/err" || fail "rehearse: the breaking call is not listed"
python3 - "$work/rh.json" "$work/rh.sarif" <<'PY' || fail "rehearse: JSON/SARIF do not mark the findings rehearsed"
import json, sys
j = json.load(open(sys.argv[1]))
assert [f["rule"] for f in j["findings"]] == ["unsafe-call-during-capture", "sync-during-capture"], j["findings"]
assert all(f["rehearsed"] is True and f["region"] == "step" for f in j["findings"])
r = j["rehearsals"][0]
assert (r["name"], r["verdict"], r["executions"], r["mode"]) == ("step", "not_capturable", 3, "global"), r
assert [b["api"] for b in r["breaks"]] == ["cudaStreamSynchronize"], r
s = json.load(open(sys.argv[2]))
assert all(x["properties"]["rehearsed"] is True for x in s["runs"][0]["results"])
PY
grep -q 'Capture rehearsal' "$work/rh.html" || fail "rehearse: HTML has no rehearsal section"
# Without the synchronize the first execution's allocation is the warm-up's; relaxed mode lets
# it pass (a note).
grep -v cudaStreamSynchronize "$t/rehearse/capguard.80.trace" >"$t/warmup.trace"
expect 1 '^SUMMARY: capguard: 1 error' -- "$capguard" report "$t/warmup.trace"
grep -q '^  "step" (process 80, global mode, 3 executions): capturable after 1 warm-up execution$' "$work/err" || fail "rehearse: warm-up verdict not printed"
grep -q '^      allocation: cudaMalloc at .*\[unsafe-call-during-capture\], in 1 of 3 executions$' "$work/err" || fail "rehearse: the warm-up's allocation is not listed"
expect 0 '^SUMMARY: capguard: 0 errors, 0 warnings, 1 note' -- "$capguard" report --rehearse-mode relaxed "$t/warmup.trace"
expect 2 'rehearse-mode' -- "$capguard" report --rehearse-mode sometimes "$t/warmup.trace"
expect 2 'NVTX_INJECTION64_PATH already names another tool' -- env NVTX_INJECTION64_PATH=/opt/nsys/libToolsInjection64.so "$capguard" run --rehearse step -- true
expect 2 'a glob must be 1 to 255 bytes' -- "$capguard" run --rehearse '' -- true
# The traces name the run's --rehearse globs ('q'): one that no region matched is "never
# executed", and the gate fails closed (3) unless findings already fail it (1, then a warning).
{ sed -n 1,4p "$t/warmup.trace"; printf 'q st*\nq decode\n'; sed -n '5,$p' "$t/warmup.trace"; } >"$t/never.trace"
grep -v cudaMalloc "$t/never.trace" >"$t/never_clean.trace"
expect 3 'SUMMARY: capguard: 0 errors' -- "$capguard" report -o json:"$work/never.json" "$t/never_clean.trace"
grep -q '^capguard: --rehearse decode: no NVTX range with a matching message ran in any process' "$work/err" || fail "rehearse: a glob that matched nothing is not named"
grep -q '^  "decode" (--rehearse): never executed' "$work/err" || fail "rehearse: never_executed verdict not printed"
grep -q '"st\*"' "$work/err" && fail "rehearse: a glob that matched a region is named never executed"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rehearsals"]; assert [(x["name"], x["verdict"]) for x in r] == [("step", "capturable"), ("decode", "never_executed")], r' "$work/never.json" || fail "rehearse: JSON verdicts"
expect 0 'SUMMARY: capguard: 0 errors' -- "$capguard" report --fail-on never "$t/never_clean.trace"
expect 1 'SUMMARY: capguard: 1 error' -- "$capguard" report "$t/never.trace"
grep -q 'warning: --rehearse decode' "$work/err" || fail "rehearse: never executed is not a warning when findings fail the gate"

# --- Rule options (rules.def CAPGUARD_RULE_OPTION): explain lists them; --rule-option changes
# what is reported and the report says so; a bad one is a usage error.
"$capguard" explain graph-specialization-growth | grep -q '^  late-graphs = 8: ' || fail "explain does not list the rule's options"
growth=$(cd "$(dirname "$0")/../.." && pwd)/testcases/recorded/traces/graph_specialization_growth
if [ -d "$growth" ]; then
  expect 0 '^SUMMARY: capguard: 0 errors, 1 warning' -- "$capguard" report "$growth"
  expect 0 '^SUMMARY: capguard: 0 errors, 0 warnings' -- "$capguard" report --rule-option graph-specialization-growth.late-graphs=100 -o json:"$work/opt.json" "$growth"
  grep -q '^capguard: rule option graph-specialization-growth.late-graphs = 100 (default 8)$' "$work/err" || fail "text: a changed rule option is not said"
  python3 -c 'import json,sys; o=json.load(open(sys.argv[1]))["rule_options"]; assert o == [{"rule": "graph-specialization-growth", "option": "late-graphs", "value": 100, "default": 8}], o' "$work/opt.json" || fail "JSON: rule_options"
fi
expect 2 'no such rule option' --one-line -- "$capguard" report --rule-option graph-specialization-growth.nope=1 "$t/clean.trace"
expect 2 'non-negative integer' --one-line -- "$capguard" run --rule-option graph-rebuilt-every-step.steps=-1 -- /bin/true

# --- --user-code reaches every format: a recorded trace whose culprit is a std::thread lambda;
# naming libstdc++'s headers as the user's code moves the user frame into <bits/invoke.h>.
recorded=$(cd "$(dirname "$0")/../.." && pwd)/testcases/recorded/traces/unsafe_call_other_thread
if [ -d "$recorded" ]; then
  "$capguard" report -q -o json:"$work/uc.json" -o sarif:"$work/uc.sarif" -o junit:"$work/uc.xml" \
    --user-code '/usr/include/c++/*' "$recorded"
  [ $? = 1 ] || fail "report --user-code: exit status not 1"
  python3 - "$work/uc.json" <<'PY' || fail "--user-code: JSON user_frame not moved to invoke.h"
import json, sys
f = json.load(open(sys.argv[1]))["findings"][0]["location"]
sys.exit(0 if f["frames"][f["user_frame"]]["file"].endswith("bits/invoke.h") else 1)
PY
  sarif_uri() {
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][0]["results"][0]
print(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])' "$1"
  }
  [[ $(sarif_uri "$work/uc.sarif") == *bits/invoke.h ]] || fail "--user-code: SARIF location not moved"
  grep -q '<failure' "$work/uc.xml" || fail "--user-code: no JUnit failure written"
  "$capguard" report -q -o sarif:"$work/default.sarif" "$recorded"
  [[ $(sarif_uri "$work/default.sarif") == *unsafe_call_other_thread.cu ]] ||
    fail "without --user-code: SARIF location is not the program's line"
  echo "ok: --user-code moves the user frame of json and sarif"
else
  echo "skip: no recorded trace at $recorded"
fi

# --- the pytest plugin's marks beside a trace: each finding names the test it was made in, and
# JUnit gets a test case per test, only the one that synchronized failing. The synchronize is
# event 2 (time 0x14 = 20 ns) of pid 0x1e240 = 123456.
mkdir -p "$t/pytest"
cp "$t/sync.trace" "$t/pytest/capguard.123456.trace"
printf 'capguard-test-begin 1 123456 t.py::test_clean\ncapguard-test-end 15 123456 t.py::test_clean\n'\
'capguard-test-begin 16 123456 t.py::test_sync\ncapguard-test-end 40 123456 t.py::test_sync\n'\
'capguard-test-begin 9 123456 t.py::back_in_time\nnot a mark\n' >"$t/pytest/capguard.123456.tests"
expect 1 '^SUMMARY: capguard: 1 error' -- "$capguard" report --no-source -o "junit:$t/pytest.xml" \
  -o "json:$t/pytest.json" -o "sarif:$t/pytest.sarif" "$t/pytest"
grep -q '^  in test t.py::test_sync$' "$work/err" || fail "pytest: text does not name the test"
python3 - "$t/pytest.xml" "$t/pytest.json" "$t/pytest.sarif" <<'PY' || fail "pytest: findings not attributed to t.py::test_sync alone"
import json, sys
import xml.etree.ElementTree as ET
cases = {c.get("name"): c for c in ET.parse(sys.argv[1]).iter("testcase")}
assert set(cases) >= {"t.py::test_clean", "t.py::test_sync"}, cases
assert "back_in_time" not in "".join(cases)
assert cases["t.py::test_clean"].find("failure") is None
assert cases["t.py::test_sync"].find("failure").get("type") == "sync-during-capture"
assert all(c.find("failure") is None for n, c in cases.items() if n != "t.py::test_sync")
assert [f.get("test") for f in json.load(open(sys.argv[2]))["findings"]] == ["t.py::test_sync"]
result = json.load(open(sys.argv[3]))["runs"][0]["results"][0]
assert result["properties"]["test"] == "t.py::test_sync"
PY
python3 "$tests/validate_junit.py" "$t/pytest.xml" >/dev/null || fail "pytest: JUnit not valid"
echo "ok: the pytest plugin's marks attribute findings to tests"

echo
if [ $failures -ne 0 ]; then echo "$failures CLI test(s) failed"; exit 1; fi
echo "all CLI tests passed"
