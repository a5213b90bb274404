#!/usr/bin/env bash
# On the GPU machine (one H100): the programs that reach CUDA through its libraries, under
# capguard, compared with their `// expect:` lines: testcases/libs/ (cuBLAS, cuBLASLt, cuFFT,
# cuSPARSE, cuRAND, CUB, Thrust; built there with nvcc; and PyTorch's NCCL and cuDNN in
# torch.cuda.graph, libs/*.py), and the LibTorch C++ programs (scripts/gpu_libtorch.sh). Each table ends
# with "N passed, 0 failed" when everything holds; the exit status is 0 then.
#   BUNDLE=.gpu-bundle OUT=/tmp/capguard-libs scripts/gpu_libs.sh     (BUNDLE: capguard + .so)
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_bundle.sh
ROOT=$PWD
BUNDLE=${BUNDLE:-.gpu-bundle}
OUT=${OUT:-/tmp/capguard-libs}
B=${BUILD_DIR:-/tmp/capguard-gpu-build}
mkdir -p "$OUT" "$B/testcases"
install_bundle "$BUNDLE" "$B"
[ -d /opt/torch/.venv ] && export PATH=/opt/torch/.venv/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
status=0

echo "== build testcases/libs"
libs="-lcublas -lcublasLt -lcufft -lcusparse -lcurand"
for source in testcases/libs/*.cu; do
  name=$(basename "$source" .cu)
  nvcc -O0 -g -lineinfo -arch=sm_90 -cudart shared -Xcompiler -fno-omit-frame-pointer -I"$ROOT/testcases" \
    -o "$B/testcases/$name" "$source" $libs >"$OUT/build-$name.log" 2>&1 ||
    { echo "FAIL: cannot build $name"; tail -20 "$OUT/build-$name.log"; status=1; }
done
echo "== testcases/libs"
python3 testcases/check_expectations.py --source testcases --build "$B" --capguard "$B/capguard" \
  --out "$OUT/libs" --suites libs --timeout 300 || status=1
echo "== LibTorch C++"
BUILD_DIR=$B OUT=$OUT/libtorch scripts/gpu_libtorch.sh || status=1
echo "== user frames of every finding (the program's own line; library frames in the text reports)"
python3 scripts/print_user_frames.py "$OUT"/*/*.json
exit $status
