#!/usr/bin/env bash
# Packaging on the GPU machine: run's check before the start stays silent where the driver, a GPU
# and a CUPTI are there; --fail-fast does not stop a real run; the installed layout (wheel:
# venv/lib/capguard/libcapguard.so) attaches and finds the testcase's mistake; the hardened
# build's cost on the bench ratios, against one without the flags.
#   BUILD_DIR=build OUT=/tmp/out scripts/gpu_packaging_check.sh     (build: scripts/setup.sh)
# Where the tree's dependencies are not installed (the lent GPU machine), from bundles built
# elsewhere instead: BUNDLE holds capguard, libcapguard.so and bench/bench_*, NOHARD_BUNDLE a
# libcapguard.so built with -DCAPGUARD_HARDENING=OFF, PROGRAM a built unjoined_fork testcase.
#   BUNDLE=.gpu-bundle NOHARD_BUNDLE=.gpu-bundle/nohard PROGRAM=... scripts/gpu_packaging_check.sh
# Expected: "ok:" lines only, then the bench table of scripts/gpu_bench_compare.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
out=${OUT:-/tmp/capguard-packaging}
mkdir -p "$out"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
if [ -n "${BUNDLE:-}" ]; then
  capguard=$BUNDLE/capguard
  program=${PROGRAM:?PROGRAM: a built unjoined_fork testcase}
else
  capguard=$build/capguard
  program=$build/testcases/unjoined_fork
  cmake --build "$build" -j --target capguard capguard_interposer capguard_man unjoined_fork >/dev/null
fi

"$capguard" run -- /bin/true 2>"$out/true.err"
if grep -q 'before starting the program' "$out/true.err"; then
  fail "the preflight line on a GPU machine: $(head -n 1 "$out/true.err")"
else
  ok "no preflight line where driver, GPU and CUPTI are found"
fi
"$capguard" run --fail-fast -- "$program" 2>"$out/fail_fast.err"
status=$?
if [ $status = 1 ] && grep -q 'ERROR: capguard: unjoined-fork' "$out/fail_fast.err"; then
  ok "run --fail-fast on a GPU runs the program and finds unjoined-fork"
else
  fail "run --fail-fast -> $status: $(tail -n 3 "$out/fail_fast.err")"
fi

# The wheel's layout: bin/capguard finds lib/capguard/libcapguard.so.
prefix=$out/prefix
rm -rf "$prefix"
if [ -n "${BUNDLE:-}" ]; then  # the installed layout, as cmake/install.cmake makes it
  mkdir -p "$prefix/bin" "$prefix/lib/capguard"
  cp "$BUNDLE/capguard" "$prefix/bin/" && cp "$BUNDLE/libcapguard.so" "$prefix/lib/capguard/"
else
  cmake --install "$build" --prefix "$prefix" >/dev/null
fi
"$prefix/bin/capguard" run -- "$program" 2>"$out/installed.err"
status=$?
if [ $status = 1 ] && grep -q 'ERROR: capguard: unjoined-fork' "$out/installed.err"; then
  ok "installed capguard ($prefix/lib/capguard/libcapguard.so) attaches"
else
  fail "installed capguard -> $status: $(tail -n 3 "$out/installed.err")"
fi

echo "== hardening: bench ratios without (before) and with (after) the flags"
if [ -n "${BUNDLE:-}" ]; then
  before=$out/before after=$out/after  # the same capguard; only libcapguard.so's flags differ
  mkdir -p "$before" "$after" && cp "$BUNDLE"/capguard "$before/" &&
    cp "${NOHARD_BUNDLE:?}"/libcapguard.so "$before/" &&
    cp "$BUNDLE"/capguard "$BUNDLE"/libcapguard.so "$BUNDLE"/bench/bench_* "$after/"
  scripts/gpu_bench_compare.sh "$before" "$after" "${ROUNDS:-5}" | tee "$out/hardening_bench.txt"
  ((failures == 0)) || { echo "$failures check(s) failed"; exit 1; }
  exit 0
fi
nohard=$build-nohard
cmake -S . -B "$nohard" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAPGUARD_HARDENING=OFF \
  -DCAPGUARD_TESTCASES=OFF >/dev/null && cmake --build "$nohard" -j --target capguard capguard_interposer >/dev/null &&
  cmake --build "$build" -j --target bench_eager_launch bench_capture_kernels bench_graph_replay >/dev/null &&
  scripts/gpu_bench_compare.sh "$nohard" "$build" 5 | tee "$out/hardening_bench.txt"
((failures == 0)) || { echo "$failures check(s) failed"; exit 1; }
