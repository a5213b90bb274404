#!/usr/bin/env bash
# Runs the interposer's smoke scenarios (interposer/smoke/) on the GPU machine under
# libcapguard.so and prints each trace without its module records. Needs nvcc and a GPU.
#   BUILD_DIR=build-interposer OUT=/tmp/out scripts/gpu_smoke.sh
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD_DIR:-build-interposer}
LIB=$ROOT/$BUILD/libcapguard.so
OUT=${OUT:-/tmp/capguard-smoke}
BIN=/tmp/capguard-smoke-bin
TRACES=$OUT/traces
rm -rf "$BIN" "$TRACES" && mkdir -p "$BIN" "$TRACES"

echo "== environment"
nvidia-smi -L
nvcc --version | tail -1
echo "-- ldd libcapguard.so"; ldd "$LIB"
[ -x "$BUILD/capguard" ] && { echo "-- ldd capguard"; ldd "$BUILD/capguard"; }
echo "-- libcupti:"; find / -xdev -name 'libcupti.so*' 2>/dev/null | grep -v '^/proc' | head
echo "-- ldconfig cupti:"; ldconfig -p | grep -i cupti
echo "-- python: $(python3 -c 'import torch; print(torch.__version__, torch.cuda.is_available())' 2>&1 | tail -1)"

echo "== build"
S=interposer/smoke
nvcc -O1 -arch=sm_90 -o "$BIN/smoke" $S/smoke.cu || exit 1
nvcc -O1 -arch=sm_90 --default-stream per-thread -o "$BIN/smoke_ptsz" $S/smoke_ptsz.cu || exit 1
g++ -O1 -I/usr/local/cuda/include -o "$BIN/smoke_driver" $S/smoke_driver.cpp \
  -L/usr/local/cuda/lib64/stubs -lcuda || exit 1
g++ -O1 -I/usr/local/cuda/include -o "$BIN/smoke_diag" $S/smoke_diag.cpp \
  -L/usr/local/cuda/lib64/stubs -lcuda || exit 1
g++ -O2 -shared -fPIC -I/usr/local/cuda/include -o "$BIN/empty_subscriber.so" \
  $S/empty_subscriber.cpp -L/usr/local/cuda/lib64 -lcupti || exit 1

echo "== which driver calls disturb a capture (no interposer)"
"$BIN/smoke_diag"

show() {  # the trace of scenario $1, module records counted rather than printed
  for f in "$TRACES/$1"/*; do
    [ -f "$f" ] || { echo "   (no trace)"; continue; }
    echo "   --- $(basename "$f"): $(wc -l <"$f") records, $(grep -c '^m ' "$f") modules," \
      "$(grep -c '^e ' "$f") events, $(grep -c '^s ' "$f") stacks"
    grep -v '^[ms] ' "$f" | cut -c1-200 | head -${LINES_PER_TRACE:-40} | sed 's/^/   /'
  done
}
run() {  # run NAME COMMAND...: under LD_PRELOAD, trace into $TRACES/NAME
  local name=$1; shift
  mkdir -p "$TRACES/$name"
  echo "== $name"
  CAPGUARD_TRACE_DIR=$TRACES/$name LD_PRELOAD=$LIB "$@" 2>&1 | sed 's/^/   /'
  echo "   exit ${PIPESTATUS[0]}"
  show "$name"
}

run good "$BIN/smoke" good
run sync_copy "$BIN/smoke" sync_copy
run stream_sync "$BIN/smoke" stream_sync
run other_thread_malloc "$BIN/smoke" other_thread_malloc
run exchange_mode "$BIN/smoke" exchange_mode
run fork "$BIN/smoke" fork
run abort "$BIN/smoke" abort
run ptsz "$BIN/smoke_ptsz"
run driver "$BIN/smoke_driver"

echo "== injection only (CUDA_INJECTION64_PATH, no LD_PRELOAD)"
mkdir -p "$TRACES/injection_only"
CAPGUARD_TRACE_DIR=$TRACES/injection_only CUDA_INJECTION64_PATH=$LIB "$BIN/smoke" sync_copy \
  >/dev/null 2>&1
echo "   exit $?"; show injection_only

echo "== cost: eager and captured empty-kernel launches"
echo "-- without the interposer"
"$BIN/smoke" launch_loop 50000
echo "-- with an empty CUPTI subscriber (runtime + driver domains)"
CUDA_INJECTION64_PATH=$BIN/empty_subscriber.so "$BIN/smoke" launch_loop 50000
echo "-- with libcapguard.so"
mkdir -p "$TRACES/launch_loop"
CAPGUARD_TRACE_DIR=$TRACES/launch_loop LD_PRELOAD=$LIB "$BIN/smoke" launch_loop 50000
echo "   events recorded: $(grep -c '^e ' "$TRACES"/launch_loop/*)"

if python3 -c 'import torch' 2>/dev/null; then
  LINES_PER_TRACE=25 run torch python3 $S/smoke_torch.py
fi

tar czf "$OUT/traces.tgz" -C "$OUT" traces && rm -rf "$TRACES"
