#!/usr/bin/env bash
# One batched session on the GPU machine: the testcase table (C++/CUDA, both cudart linkages,
# driver API), the CUPTI-taken check, the Python programs (PyTorch, CuPy, JAX) and the
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

if [ "${1:-}" != "--skip-bench" ]; then
  echo "== benchmarks"
  mkdir -p "$B/bench"
  cp "$BUNDLE"/bench_* "$B/bench/"
  python3 bench/run.py --build "$B" --rounds 7 --json "$OUT/bench.json"
  echo "== capture benchmark with every callback always on (CAPGUARD_CALLBACKS=all), 3 rounds"
  CAPGUARD_CALLBACKS=all python3 bench/run.py --build "$B" --rounds 3 \
    --only bench_capture_kernels --json "$OUT/bench_all_callbacks.json" 2>&1 | tail -3
fi
tar czf "$OUT/results.tgz" -C /tmp capguard-testcase-results capguard-python 2>/dev/null
