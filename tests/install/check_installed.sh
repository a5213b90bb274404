#!/usr/bin/env bash
# Checks an installed capguard: PREFIX/bin/capguard lists the rules, re-analyzes a recorded
# trace, finds PREFIX/lib/capguard/libcapguard.so and fails closed under `run` on this machine
# (no GPU, or a program that never reaches CUDA); without a GPU it says so first, and
# `run --fail-fast` does not start the program. Shared by the install, .deb and wheel tests.
# Usage: check_installed.sh PREFIX SOURCE_DIR [CAPGUARD_COMMAND...]
#   CAPGUARD_COMMAND defaults to PREFIX/bin/capguard (the wheel test also passes python -m).
set -uo pipefail
prefix=$1 source_dir=$2
shift 2
if (($#)); then capguard=("$@"); else capguard=("$prefix/bin/capguard"); fi
trace=$source_dir/testcases/recorded/traces/unjoined_fork
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

[ -x "$prefix/bin/capguard" ] || fail "$prefix/bin/capguard missing or not executable"
[ -f "$prefix/lib/capguard/libcapguard.so" ] || fail "$prefix/lib/capguard/libcapguard.so missing"

out=$("${capguard[@]}" rules 2>&1)
if [ $? = 0 ] && grep -q '^unjoined-fork' <<<"$out"; then ok "rules"; else fail "rules: $out"; fi

out=$("${capguard[@]}" report "$trace" 2>&1)
status=$?
if [ $status = 1 ] && grep -q 'ERROR: capguard: unjoined-fork' <<<"$out" &&
  grep -q '^SUMMARY: capguard: 1 error' <<<"$out"; then
  ok "report $trace"
else
  fail "report $trace -> exit $status: $out"
fi

# Without a GPU (or with a program that never initializes CUDA) `run` must exit 3, and must
# have found the library: the message is about CUDA, not about libcapguard.so.
out=$("${capguard[@]}" run -- /bin/true 2>&1)
status=$?
if [ $status = 3 ] && ! grep -q 'libcapguard.so not found' <<<"$out"; then
  ok "run fails closed: $(tail -n 1 <<<"$out")"
else
  fail "run -- /bin/true -> exit $status: $out"
fi

if ! python3 -c 'import ctypes, glob, os, sys; ctypes.CDLL("libcuda.so.1"); sys.exit(not (glob.glob("/dev/nvidia[0-9]*") or os.path.exists("/dev/dxg")))' 2>/dev/null; then
  if head -n 1 <<<"$out" | grep -q '^capguard: warning: before starting the program: no CUDA driver'; then
    ok "run says first that there is no driver: $(head -n 1 <<<"$out" | cut -c1-100)..."
  else
    fail "run's first line is not the missing driver: $out"
  fi
  marker=$(mktemp -u)
  out=$("${capguard[@]}" run --fail-fast -- /bin/sh -c "touch '$marker'" 2>&1)
  status=$?
  if [ $status = 3 ] && [ ! -e "$marker" ]; then
    ok "run --fail-fast stops before the program: $(tail -n 1 <<<"$out")"
  else
    fail "run --fail-fast -> exit $status, program started: $([ -e "$marker" ] && echo yes || echo no): $out"
  fi
  rm -f "$marker"
fi

((failures == 0)) || { echo "$failures check(s) failed"; exit 1; }
