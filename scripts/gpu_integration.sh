#!/usr/bin/env bash
# On the GPU machine: builds the testcase programs there (nvcc; the rest of the tree's
# dependencies are not installed there), puts them beside a capguard and libcapguard.so built
# elsewhere, runs scripts/gpu_testcases.sh, then capguard on the interposer's smoke programs.
#   BUNDLE=.gpu-bundle OUT=/tmp/out scripts/gpu_integration.sh     (BUNDLE: capguard + .so)
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_bundle.sh
ROOT=$PWD
BUNDLE=${BUNDLE:-.gpu-bundle}
OUT=${OUT:-/tmp/capguard-integration}
B=/tmp/capguard-gpu-build
mkdir -p "$B/wrapper" "$OUT"

echo "== ldd capguard"; ldd "$BUNDLE/capguard"
cat >"$B/wrapper/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(capguard_testcases LANGUAGES C CXX)
find_package(CUDAToolkit REQUIRED)
find_package(Threads REQUIRED)
add_subdirectory($ROOT/testcases testcases)
CMAKE
echo "== build testcases"
start=$(date +%s)
cmake -S "$B/wrapper" -B "$B" -G Ninja >"$OUT/cmake.log" 2>&1 &&
  cmake --build "$B" --target testcases -j16 >>"$OUT/cmake.log" 2>&1 ||
  { tail -30 "$OUT/cmake.log"; exit 1; }
echo "   built $(find "$B/testcases" -maxdepth 1 -type f -executable | wc -l) programs" \
  "in $(($(date +%s) - start)) s"
install_bundle "$BUNDLE" "$B"

echo "== testcases"
R=/tmp/capguard-testcase-results
BUILD_DIR=$B scripts/gpu_testcases.sh "$R"
status=$?
# The live findings against the recorded goldens, messages and all (addresses, ids, threads and
# timings aside): an interposer change that keeps what the rules read keeps this at 0 differ.
python3 scripts/compare_live_to_goldens.py "$R" | tail -12 || status=1
tar czf "$OUT/testcase-results.tgz" -C /tmp capguard-testcase-results

echo "== capguard run on the smoke programs"
nvcc -O0 -g -arch=sm_90 -o /tmp/smoke interposer/smoke/smoke.cu
for scenario in sync_copy stream_sync other_thread_malloc; do
  echo "-- smoke $scenario"
  "$B/capguard" run -- /tmp/smoke "$scenario" 2>&1 | head -40
  echo "   exit ${PIPESTATUS[0]}"
done
echo "-- torch"
"$B/capguard" run -- python3 interposer/smoke/smoke_torch.py 2>&1 | head -60
echo "   exit ${PIPESTATUS[0]}"
exit $status
