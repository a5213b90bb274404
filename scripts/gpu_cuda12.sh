#!/usr/bin/env bash
# CUDA 12 on the GPU machine, which has CUDA 13 alone: the testcase programs built with
# CUDA 12.4 on the development machine (scripts/build_cuda12_testcases.sh, carried in
# .cuda12-bundle) under capguard, static and shared cudart, the shared build also on the 12.9
# runtime; their findings against the same programs built with CUDA 13 (run first: the table
# of scripts/gpu_integration.sh in $C13, default /tmp/capguard-testcase-results); Python on a
# CUDA 12 runtime; a process holding both runtimes; a CUDA 11 runtime refused with exit 3.
#   BUNDLE=.gpu-bundle OUT=/tmp/out [PARTS='tables python cuda11 cupti13'] [ONLY=REGEX] \
#     scripts/gpu_cuda12.sh [--bench-only]
# PARTS picks what runs (all by default); ONLY narrows the tables to some programs.
# --bench-only: the in-program benchmarks alone, built with CUDA 12.4 ($C12/bench) and with CUDA
# 13 ($BUNDLE/bench_*), alternating, 5 rounds each: the ratios must be within 0.02 of each other.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_bundle.sh
ROOT=$PWD
BUNDLE=${BUNDLE:-.gpu-bundle}
C12=/tmp/capguard-cuda12-bundle
rm -rf "$C12" && mkdir -p "$C12" && tar xJf "${C12_BUNDLE:-$ROOT/.cuda12-bundle/bundle.tar.xz}" -C "$C12"
C13=${C13:-/tmp/capguard-testcase-results}
OUT=${OUT:-/tmp/capguard-cuda12}
B=/tmp/capguard-cuda12-build
mkdir -p "$B" "$OUT"
install_bundle "$BUNDLE" "$B"
ln -sfn "$C12/testcases" "$B/testcases"
[ -d /opt/torch/.venv ] && export PATH=/opt/torch/.venv/bin:$PATH
status=0
if [ "${1:-}" = --bench-only ]; then
  B13=/tmp/capguard-bench13 B12=/tmp/capguard-bench12
  mkdir -p "$B13/bench" "$B12/bench"
  install_bundle "$BUNDLE" "$B13" && cp "$BUNDLE"/bench_* "$B13/bench/"
  install_bundle "$BUNDLE" "$B12" && cp "$C12"/bench/bench_* "$B12/bench/"
  for binary in bench_eager_launch bench_capture_kernels bench_graph_replay; do
    for round in 1 2; do
      for cuda in 13 12; do
        dir=$B13
        [ $cuda = 12 ] && dir=$B12
        echo "cuda$cuda round$round $(CUDA_HOME=$C12/cuda-12 python3 bench/run.py --build "$dir" \
          --only "$binary" --rounds 5)"
      done
    done
  done
  exit 0
fi
# The programs that compiled with 12.4 (the others: $C12/skipped.txt).
only="^($(ls "$C12/testcases" | paste -sd'|'))\$"
suites=main,libs  # libs: CUB, Thrust and the CUPTI clients (the others need CUDA 12's libraries)
echo "== CUDA 12.4 build: $(ls "$C12/testcases" | wc -l) programs; not built with 12.4:"
sed 's/^/   /' "$C12/skipped.txt"

run_table() {  # name, check_expectations options...
  local name=$1
  shift
  python3 testcases/check_expectations.py --source testcases --build "$B" --capguard "$B/capguard" \
    --out "$OUT/$name" --timeout 120 "$@" >"$OUT/$name.table" 2>"$OUT/$name.stderr"
  local s=$?
  echo "== $name: $(grep -c '| PASS' "$OUT/$name.table") PASS, $(grep -c '| FAIL' "$OUT/$name.table") FAIL (exit $s)"
  grep '| FAIL' "$OUT/$name.table" | head -20
  [ $s -eq 0 ] || [ -n "${INFORMATIVE:-}" ] || status=1
}

PARTS=${PARTS:-tables python cuda11 cupti13}
part() { [[ " $PARTS " == *" $1 "* ]]; }
if [ -n "${ONLY:-}" ]; then
  only="^($(ls "$C12/testcases" | grep -E "$ONLY" | paste -sd'|'))\$"
fi
# A CUDA 12.4 installation as users have it: CUDA_HOME, its lib64 on the loader's path.
export CUDA_HOME=$C12/cuda-12
part tables && LD_LIBRARY_PATH=$C12/cuda-12/lib64 run_table cuda12.4 --only "$only" --suites $suites
# The same shared builds on the 12.9 runtime, laid out as PyPI's nvidia-cuda-runtime-cu12.
only_shared="^($(ls "$C12/testcases" | grep -E "${ONLY:-.}" | grep '_shared$' | paste -sd'|'))\$"
part tables && [ "$only_shared" != '^()$' ] && LD_LIBRARY_PATH=$C12/site-packages/nvidia/cuda_runtime/lib run_table cuda12.9 --only "$only_shared" \
  --suites main

if part tables && [ ! -f "$C13/results.json" ]; then
  echo "== no CUDA 13 results in $C13 to compare with (run scripts/gpu_integration.sh first)"
elif part tables; then
  echo "== same findings as the CUDA 13 build (rule, file, line per program)"
  python3 scripts/compare_cuda_results.py "$C13/results.json" "$OUT"/cuda12.*/results.json || status=1
fi

echo "== which CUPTI each run attached (from the traces' 'w' records)"
for run in cuda12.4 cuda12.9; do
  for f in "$OUT/$run"/traces/*/capguard.*.trace; do grep -m1 '^w ' "$f"; done | sort | uniq -c
done

if part python; then
  echo "== Python on the CUDA 12.9 runtime, and a process with PyTorch's CUDA 13 runtime beside it"
  export CAPGUARD_CUDART12=$C12/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12
  run_table python-cuda12 --suites cuda12
  python3 scripts/print_user_frames.py "$OUT/python-cuda12"/*.json
fi

part cuda11 && echo "== CUDA 11: a program on the CUDA 11.8 runtime is refused, exit 3"
if ! part cuda11; then
  :
elif [ -f "$C12/cuda-11/libcudart.so.11.0" ]; then
  timeout 120 "$B/capguard" run -- python3 -c "import ctypes; rt = ctypes.CDLL('$C12/cuda-11/libcudart.so.11.0'); print('cudaFree:', rt.cudaFree(None))" \
    >"$OUT/cuda11.log" 2>&1
  s=$?
  cat "$OUT/cuda11.log"
  echo "   exit $s"
  [ $s -eq 3 ] || status=1
else
  echo "   no CUDA 11 runtime in the bundle"
fi

part cupti13 && echo "== CUPTI 13 forced onto the CUDA 12.4 static programs (CAPGUARD_CUPTI): does it see them?"
part cupti13 && INFORMATIVE=1 CAPGUARD_CUPTI=/usr/local/cuda/lib64/libcupti.so.13 LD_LIBRARY_PATH=$C12/cuda-12/lib64 \
  run_table cupti13-on-12 --only '^(sync_during_capture|unjoined_fork|escaped_side_stream_work|captured_event_query)$'
tar czf "$OUT/cuda12-results.tgz" -C "$OUT" . 2>/dev/null
exit $status
