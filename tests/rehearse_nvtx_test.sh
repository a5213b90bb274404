#!/usr/bin/env bash
# Capture rehearsal's NVTX side on the CPU: `capguard run --rehearse GLOB` makes NVTX load
# libcapguard.so (NVTX_INJECTION64_PATH), matching ranges reach the trace as 'r'/'R' records and
# the report's verdicts; without --rehearse NVTX never loads capguard. Python's
# capguard_cuda.rehearse (context manager and decorator) through libnvToolsExt.so.1.
#   tests/rehearse_nvtx_test.sh CAPGUARD RANGES_PROGRAM NVTX_LIB_DIR PYTHON_PACKAGE_DIR
# CAPGUARD_TEST_EMULATOR (scripts/test_aarch64.sh: qemu-aarch64-static) runs capguard and the
# program, binaries of another architecture, under it; the Python part then needs a python3 of
# that architecture and is skipped.
set -uo pipefail
read -r -a emu <<<"${CAPGUARD_TEST_EMULATOR:-}"
capguard=$1 program=$2
cg=("${emu[@]}" "$capguard") prog=("${emu[@]}" "$program")
export LD_LIBRARY_PATH=$3${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=$4${PYTHONPATH:+:$PYTHONPATH}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
has() { grep -Eq -- "$1" "$2" || { fail "$3"; sed 's/^/    /' "$2"; }; }

# No GPU here: capguard cannot attach to CUDA, which --no-require-attach tolerates.
"${cg[@]}" run --no-require-attach --trace-dir "$work/t1" --rehearse 'step*' -- "${prog[@]}" \
  >"$work/out" 2>"$work/err"
[ $? = 0 ] || fail "run --rehearse: exit status not 0"
has '^ranges: done$' "$work/out" "the program did not run"
has '^  "step" \(process [0-9]+, global mode, 3 executions\): capturable$' "$work/err" "push/pop ranges not rehearsed"
has '^  "step-4" \(process [0-9]+, global mode, 1 execution\): capturable$' "$work/err" "start/end range not rehearsed"
has '^  "step-in-domain" in domain mylib ' "$work/err" "the domain's range not rehearsed"
grep -q '"outer"' "$work/err" && fail "a range outside the glob was rehearsed"
[ "$(cat "$work"/t1/*.trace | grep -c '^r ')" = 5 ] || fail "expected 5 'r' records"

"${cg[@]}" run --no-require-attach --trace-dir "$work/t2" -- "${prog[@]}" >"$work/out" 2>"$work/err"
# (no CUDA, no rehearsed range: the interposer never even opens a trace)
cat "$work"/t2/*.trace 2>/dev/null | grep -q '^r ' && fail "ranges recorded without --rehearse"
grep -q 'capture rehearsal' "$work/err" && fail "a rehearsal section without --rehearse"

"${cg[@]}" run --no-require-attach --rehearse 'step' --rehearse 'nothing' -- "${prog[@]}" >"$work/out" 2>"$work/err"
has 'no NVTX range with a matching message ran' "$work/err" "a glob that matched nothing is not said"
has '^  "nothing" \(--rehearse\): never executed' "$work/err" "the glob that matched nothing has no verdict"
has '^  "step" \(process [0-9]+, global mode, 3 executions\): capturable$' "$work/err" "a second --rehearse lost the first"

if ((${#emu[@]})); then
  echo "skipped under ${emu[*]}: capguard_cuda.rehearse needs a python3 of the emulated architecture"
  [ $failures -eq 0 ] && echo "rehearse NVTX tests passed" && exit 0
  echo "$failures rehearse NVTX test(s) failed"; exit 1
fi
cat >"$work/app.py" <<'PY'
import capguard_cuda

@capguard_cuda.rehearse("decode")
def decode():
    return 1

for _ in range(2):
    decode()
with capguard_cuda.rehearse("prefill"):
    pass
print("python: done", decode.__name__)
PY
"${cg[@]}" run --no-require-attach --rehearse '*' -- python3 "$work/app.py" >"$work/out" 2>"$work/err"
has '^python: done decode$' "$work/out" "the Python program did not run"
has '^  "decode" \(process [0-9]+, global mode, 2 executions\): capturable$' "$work/err" "the decorator's range not rehearsed"
has '^  "prefill" \(process [0-9]+, global mode, 1 execution\): capturable$' "$work/err" "the context manager's range not rehearsed"

if [ $failures -ne 0 ]; then echo "$failures rehearse NVTX test(s) failed"; exit 1; fi
echo "rehearse NVTX tests passed"
