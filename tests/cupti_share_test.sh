#!/usr/bin/env bash
# The program's own CUPTI client under `capguard run`, on the CPU, against tests/fake_cupti (a
# libcupti.so.13 that behaves like CUPTI 13.0, or 13.2's multi-subscriber mode, or one a tool
# holds): the client gets what CUPTI alone gives it, and the report says how CUPTI was shared,
# or that capguard stopped watching, or who holds CUPTI.
#   tests/cupti_share_test.sh CAPGUARD CLIENT_PROGRAM FAKE_CUPTI_DIR
# CAPGUARD_TEST_EMULATOR (scripts/test_aarch64.sh: qemu-aarch64-static) runs capguard and the
# client, binaries of another architecture, under it.
set -uo pipefail
read -r -a emu <<<"${CAPGUARD_TEST_EMULATOR:-}"
capguard=$1 client=$2
cg=("${emu[@]}" "$capguard") cl=("${emu[@]}" "$client")
export LD_LIBRARY_PATH=$3${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# run EXPECTED_STATUS PATTERN_IN_STDERR -- COMMAND...
check() {
  local status=$1 pattern=$2
  shift 3
  "$@" >"$work/out" 2>"$work/err"
  local got=$?
  if [ "$got" != "$status" ]; then
    fail "$* -> exit $got, expected $status"; sed 's/^/    /' "$work/out" "$work/err"
  elif ! grep -Eq -- "$pattern" "$work/err" "$work/out"; then
    fail "$* -> no line matches '$pattern'"; sed 's/^/    /' "$work/out" "$work/err"
  else
    echo "ok: exit $got: ${*#"${cg[*]} "}"
  fi
}

check 0 '^client: as expected' -- "${cl[@]}"
# CUPTI 13.0: capguard forwards; the client sees what it sees alone.
check 0 "^note: process [0-9]+ shares CUPTI with cupti_share_client: capguard forwarded the callbacks it enabled" \
  -- "${cg[@]}" run -o "json:$work/forward.json" -- "${cl[@]}"
# The note goes on past 160 columns, where the text report wraps it: read it as one line.
tr '\n' ' ' <"$work/err" | tr -s ' ' | grep -q "its cuptiFinalize (1x) ended its own subscription only; 1 more subscriber(s) refused" ||
  fail "forwarded: the note does not say the finalize was kept and the second subscriber refused"
grep -q '^client: as expected' "$work/out" || fail "forwarded: the client did not get what CUPTI alone gives it"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["processes"][0]; assert p["attached"] and p["cupti_clients"][0]["sharing"] == "forwarded", p' "$work/forward.json" || fail "JSON: forwarded client"
# CUPTI 13.2's multi-subscriber mode: the client subscribes to CUPTI itself.
FAKE_CUPTI=multi check 0 "shares CUPTI with cupti_share_client: beside capguard" -- "${cg[@]}" run -- "${cl[@]}"
grep -q '^client: as expected' "$work/out" || fail "beside: the client did not get what CUPTI alone gives it"
# Finalized behind capguard's back: every format says so and the gate fails closed.
check 3 "^==[0-9]+==capguard: stopped watching: capguard's CUPTI subscription had ended before the process exited: CUPTI was finalized" \
  -- "${cg[@]}" run -o "sarif:$work/lost.sarif" -- "${cl[@]}" behind-back
grep -q 'could not intercept' "$work/lost.sarif" || fail "SARIF: the lost subscription is not said"
# A tool holds CUPTI: capguard names it and says how to run the two; the client is refused as
# natively (exit 2 either way).
FAKE_CUPTI=held check 2 '^subscribe -> 39' -- "${cl[@]}"
FAKE_CUPTI=held check 3 "cannot attach to process [0-9]+ .*CUPTI is already in use by CUPTI for compute-sanitizer.*one after the other" \
  -- "${cg[@]}" run -- "${cl[@]}"
# Sharing off: the client gets CUPTI's own answer, as before sharing existed.
CAPGUARD_CUPTI_SHARE=0 check 2 '^subscribe -> 39' -- "${cg[@]}" run -- "${cl[@]}"

# Who ran it, end to end through the interposer: a rank's `run` under a launcher keeps
# its traces in DIR/<host>/rank<R>/, named with the host, and the trace's 'h' record and every
# format name the rank.
CAPGUARD_HOST=a17.example RANK=3 LOCAL_RANK=3 WORLD_SIZE=4 CUDA_VISIBLE_DEVICES=0,1,2,3 \
  check 0 'SUMMARY: .*1 of 4 ranks' -- "${cg[@]}" run --trace-dir "$work/job" -o "json:$work/rank.json" -- "${cl[@]}"
trace=$(ls "$work"/job/a17.example/rank3/capguard.*.a17.example.trace 2>/dev/null)
[ -n "$trace" ] || fail "who ran it: no trace in $work/job/a17.example/rank3/"
grep -qx 'h a17.example RANK=3 LOCAL_RANK=3 WORLD_SIZE=4 CUDA_VISIBLE_DEVICES=0,1,2,3' "$trace" ||
  fail "who ran it: no 'h' record in $trace"
grep -q '"label": "rank 3 (node a17.example, GPU 3)"' "$work/rank.json" || fail "who ran it: JSON"

[ "$failures" = 0 ] && echo "all CUPTI sharing tests passed" || exit 1
