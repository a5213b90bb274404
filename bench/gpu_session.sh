#!/usr/bin/env bash
# One batched GPU session for the overhead work: every testcase under capguard, a check
# that every call of a capture reaches the trace although callbacks are switched on only when
# the capture begins (one thread and eight), then bench/run.py.
#   BUNDLE=.gpu-bundle-perf OUT=/tmp/out bench/gpu_session.sh [rounds]
set -uo pipefail
cd "$(dirname "$0")/.."
BUNDLE=${BUNDLE:-.gpu-bundle-perf}
OUT=${OUT:-/tmp/capguard-perf}
ROUNDS=${1:-7}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; date -u
BUNDLE=$BUNDLE OUT=$OUT scripts/gpu_integration.sh >"$OUT/integration.log" 2>&1
echo "integration exit $?"
echo "rows with PASS: $(grep -c PASS /tmp/capguard-testcase-results/table.txt)," \
  "with FAIL: $(grep -c FAIL /tmp/capguard-testcase-results/table.txt)"
grep FAIL /tmp/capguard-testcase-results/table.txt | head -20
tail -3 /tmp/capguard-testcase-results/table.txt

B=$BUNDLE
echo "== every captured call recorded (reduced callbacks outside captures)"
for mode in reduced all; do
  T=/tmp/cg-count-$mode; rm -rf $T; mkdir -p $T/a $T/b
  env CAPGUARD_CALLBACKS=$mode "$B/capguard" run --trace-dir $T/a -- \
    "$B/bench/bench_capture_kernels" 1000 3 >/dev/null 2>&1
  env CAPGUARD_CALLBACKS=$mode "$B/capguard" run --trace-dir $T/b -- \
    "$B/bench/bench_multithread_capture" 8 500 2 >/dev/null 2>&1
  echo "$mode: capture_kernels launches=$(cat $T/a/*.trace | grep -c cudaLaunchKernel)" \
    "lines=$(cat $T/a/*.trace | wc -l)  multithread launches=$(cat $T/b/*.trace | grep -c cudaLaunchKernel)" \
    "lines=$(cat $T/b/*.trace | wc -l)"
done
echo "== benchmarks"
python3 bench/run.py --build "$B" --rounds "$ROUNDS" --json "$OUT/bench.json"
echo "== eager loop with every callback on (CAPGUARD_CALLBACKS=all), 3 rounds"
CAPGUARD_CALLBACKS=all python3 bench/run.py --build "$B" --rounds 3 --only bench_eager_launch \
  --json "$OUT/bench_all_callbacks.json" 2>&1 | tail -4
