#!/usr/bin/env bash
# One batched session on the GPU machine: testcases table, smoke programs, CUPTI-taken check,
# Python programs (PyTorch, CuPy, JAX), and the benchmarks. Everything lands under $OUT.
#   BUNDLE=.gpu-bundle OUT=/tmp/out scripts/gpu_full.sh [--skip-bench]
set -uo pipefail
cd "$(dirname "$0")/.."
BUNDLE=${BUNDLE:-.gpu-bundle}
OUT=${OUT:-/tmp/capguard-full}
mkdir -p "$OUT"
B=/tmp/capguard-gpu-build
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

OUT=$OUT BUNDLE=$BUNDLE scripts/gpu_integration.sh >"$OUT/integration.log" 2>&1
echo "integration exit $?"
grep -E "^[a-z_]+ +\| (static|shared|driver)" -c "$OUT/integration.log" | sed 's/^/testcase rows: /'
grep -E "FAIL" "$OUT/integration.log" | head -20

echo "== CUPTI already taken by the program"
nvcc -O0 -g -arch=sm_90 -o /tmp/cupti_taken interposer/smoke/cupti_taken.cu -lcupti
echo "-- native:"; /tmp/cupti_taken; echo "   exit $?"
echo "-- under capguard:"; "$B/capguard" run -- /tmp/cupti_taken; echo "   exit $?"

echo "== python programs"
mkdir -p "$OUT/python"
for py in testcases/python/*.py; do
  name=$(basename "$py" .py)
  [ "$name" = common ] && continue
  echo "-- $name"
  (cd testcases/python && timeout 120 "$B/capguard" run --format json -o "$OUT/python/$name.json" \
     --trace-dir "$OUT/python/traces-$name" -- python3 "$name.py") >"$OUT/python/$name.log" 2>&1
  echo "   exit $?"
  grep -E "ERROR|WARNING|NOTE|SUMMARY|capguard:|^    #|Error|error" "$OUT/python/$name.log" | head -14
done

if [ "${1:-}" != "--skip-bench" ]; then
  echo "== benchmarks"
  mkdir -p "$B/bench"
  cp "$BUNDLE"/bench_* "$B/bench/"
  python3 bench/run.py --build "$B" --rounds 5 --json "$OUT/bench.json"
fi
