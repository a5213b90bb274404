#!/usr/bin/env bash
# On the GPU machine: the overhead benchmarks of two capguard builds in one session, so that a
# change can be judged by ratios measured side by side (docs/performance.md).
#   scripts/gpu_bench_compare.sh BEFORE_DIR AFTER_DIR [ROUNDS]
# Each DIR holds capguard and libcapguard.so; the benchmark programs come from AFTER_DIR/bench_*
# (the same binaries for both, so only capguard differs).
set -uo pipefail
cd "$(dirname "$0")/.."
before=$1 after=$2 rounds=${3:-5}
work=/tmp/capguard-bench-compare
for side in before after; do
  dir=${!side}
  mkdir -p "$work/$side/bench"
  cp "$dir/capguard" "$dir/libcapguard.so" "$work/$side/"
  cp "$after"/bench_* "$work/$side/bench/"
done
for pass in 1 2; do  # before, after, before, after: drift over the session hits both
  for side in before after; do
    for bench in bench_eager_launch bench_capture_kernels bench_graph_replay; do
      echo "pass $pass $side: $(python3 bench/run.py --build "$work/$side" --rounds "$rounds" --only $bench)"
    done
  done
done
