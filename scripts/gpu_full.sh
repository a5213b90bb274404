#!/usr/bin/env bash
# One batched session on the GPU machine: the testcase table (C++/CUDA, both cudart linkages,
# driver API), the CUPTI-taken check, the Python programs (PyTorch, CuPy, JAX), the pytest
# plugin's JUnit report (scripts/gpu_pytest_check.sh, logs in $OUT/pytest-plugin) and the
# benchmarks. Logs, reports and traces are packed into $OUT/results.tgz.
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
R=/tmp/capguard-testcase-results
echo "testcases: $(grep -c '| PASS' $R/table.txt) PASS, $(grep -c '| FAIL' $R/table.txt) FAIL"
grep '| FAIL' $R/table.txt | head -20

echo "== CUPTI already taken by the program"
nvcc -O0 -g -arch=sm_90 -o /tmp/cupti_taken interposer/smoke/cupti_taken.cu -lcupti
echo "-- native:"; /tmp/cupti_taken; echo "   exit $?"
echo "-- under capguard:"; "$B/capguard" run -- /tmp/cupti_taken; echo "   exit $?"

echo "== python programs"
P=/tmp/capguard-python
OUT=$P BUNDLE=$BUNDLE scripts/gpu_python.sh >"$OUT/python.log" 2>&1
echo "python exit $?"
grep -E '^[a-z_]+ +\|' "$OUT/python.log" | head -20
sed -n '/== findings/,$p' "$OUT/python.log"

echo "== pytest plugin: one failing and one clean test, the JUnit report (scripts/gpu_pytest_check.sh)"
CAPGUARD=$B/capguard OUT=$OUT/pytest-plugin scripts/gpu_pytest_check.sh
case $? in
  0) echo "pytest plugin: ok" ;;
  77) echo "pytest plugin: skipped (the reason is above)" ;;
  *) echo "pytest plugin: FAILED (logs in $OUT/pytest-plugin)" ;;
esac

if [ "${1:-}" != "--skip-bench" ]; then
  echo "== benchmarks"
  mkdir -p "$B/bench"
  cp "$BUNDLE"/bench_* "$B/bench/"
  python3 bench/run.py --build "$B" --rounds 7 --json "$OUT/bench.json"
  echo "== CUPTI's own share: the same programs under an empty CUPTI subscriber (median of 5)"
  nvcc -shared -Xcompiler -fPIC -o /tmp/empty_sub.so interposer/smoke/empty_subscriber.cpp -lcupti
  median() { for i in 1 2 3 4 5; do "$@" 2>/dev/null | awk '/^metric/{print $3}'; done | sort -n | sed -n 3p; }
  for args in "bench_eager_launch 200000" "bench_capture_kernels 1000 50" "bench_graph_replay 20000"; do
    set -- $args
    echo "$1: native $(median $B/bench/$1 "${@:2}")" \
      "empty-subscriber $(CUDA_INJECTION64_PATH=/tmp/empty_sub.so median $B/bench/$1 "${@:2}")" \
      "capguard $(median $B/capguard run -- $B/bench/$1 "${@:2}")"
  done
fi
tar czf "$OUT/results.tgz" -C /tmp capguard-testcase-results capguard-python 2>/dev/null
