#!/usr/bin/env bash
# On the GPU machine: public programs nobody wrote for capguard, NVIDIA's cuda-samples that use
# CUDA graphs, each run natively and then under capguard. Every one is correct, so capguard must
# report nothing and exit as the program does natively. Prints one row per program.
#   SAMPLES=<cuda-samples checkout> BUNDLE=.gpu-bundle OUT=/tmp/samples scripts/gpu_samples.sh
# (On the development machine: fetch github:NVIDIA/cuda-samples and copy its Common/ and the
# Samples/ folders named below into an ignored folder that travels with the device run.)
set -uo pipefail
cd "$(dirname "$0")/.."
SAMPLES=${SAMPLES:-.samples}
BUNDLE=${BUNDLE:-.gpu-bundle}
OUT=${OUT:-/tmp/capguard-samples}
B=/tmp/capguard-samples-build
mkdir -p "$OUT" "$B"
OUT=$(cd "$OUT" && pwd)
BUNDLE_ABS=$(cd "$BUNDLE" && pwd)
S=$SAMPLES/Samples
# name|sources|extra link flags|arguments
programs=(
  "simpleCudaGraphs|$S/3_CUDA_Features/simpleCudaGraphs/simpleCudaGraphs.cu||"
  "graphMemoryNodes|$S/3_CUDA_Features/graphMemoryNodes/graphMemoryNodes.cu||"
  "graphMemoryFootprint|$S/3_CUDA_Features/graphMemoryFootprint/graphMemoryFootprint.cu||"
  "graphConditionalNodes|$S/3_CUDA_Features/graphConditionalNodes/graphConditionalNodes.cu||"
  "jacobiCudaGraphs_m0|$S/3_CUDA_Features/jacobiCudaGraphs/jacobi.cu $S/3_CUDA_Features/jacobiCudaGraphs/main.cpp||-gpumethod=0"
  "jacobiCudaGraphs_m1|$S/3_CUDA_Features/jacobiCudaGraphs/jacobi.cu $S/3_CUDA_Features/jacobiCudaGraphs/main.cpp||-gpumethod=1"
  "conjugateGradientCudaGraphs|$S/4_CUDA_Libraries/conjugateGradientCudaGraphs/conjugateGradientCudaGraphs.cu|-lcublas -lcusparse|"
  "cudaGraphsPerfScaling|$S/6_Performance/cudaGraphsPerfScaling/cudaGraphPerfScaling.cu||3 2 20 4 1"
)
status=0
printf '%-28s | %-12s | %-12s | %s\n' program native capguard findings
for entry in "${programs[@]}"; do
  IFS='|' read -r name sources libs args <<<"$entry"
  binary=$B/${name%_m[01]}
  if [ ! -x "$binary" ]; then
    # shellcheck disable=SC2086  # lists of words
    nvcc -O2 -g -arch=sm_90 -I"$SAMPLES/Common" -o "$binary" $sources $libs >"$OUT/build-$name.log" 2>&1 ||
      { printf '%-28s | cannot build: %s\n' "$name" "$(tail -1 "$OUT/build-$name.log")"; status=1; continue; }
  fi
  # shellcheck disable=SC2086
  (cd "$OUT" && timeout 120 "$binary" $args) >"$OUT/native-$name.log" 2>&1
  native=$?
  # shellcheck disable=SC2086
  (cd "$OUT" && timeout 200 "$BUNDLE_ABS/capguard" run --format json -o "$OUT/$name.json" \
     --trace-dir "$OUT/traces/$name" -- "$binary" $args) >"$OUT/capguard-$name.log" 2>&1
  under=$?
  summary=$(grep -h '^SUMMARY' "$OUT/capguard-$name.log" | tail -1)
  verdict=PASS
  if [ "$native" != "$under" ] || ! grep -q '0 errors, 0 warnings, 0 notes' <<<"$summary"; then
    verdict=FAIL; status=1
  fi
  printf '%-28s | exit %-7s | exit %-7s | %s %s\n' "$name" "$native" "$under" "${summary#SUMMARY: capguard: }" "$verdict"
done
exit $status
