#!/usr/bin/env bash
# On the GPU machine: builds the LibTorch C++ testcases (testcases/libtorch/*.cpp) against the pip
# torch found by python3 (its include/ and lib/), then runs them under capguard and compares the
# findings with their `// expect:` lines. Prints the checker's table; PASS rows mean the twin
# reported nothing and .item() was reported at the program's own line.
#   BUILD_DIR=/tmp/capguard-gpu-build OUT=/tmp/capguard-libtorch scripts/gpu_libtorch.sh
# BUILD_DIR must hold capguard and libcapguard.so; the programs go to $BUILD_DIR/testcases/.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-/tmp/capguard-gpu-build}
OUT=${OUT:-/tmp/capguard-libtorch}
[ -d /opt/torch/.venv ] && export PATH=/opt/torch/.venv/bin:$PATH
mkdir -p "$OUT" "$BUILD_DIR/testcases"
if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "SKIP: no python3 with a CUDA-enabled torch here"
  exit 0
fi
flags=$(python3 - <<'PY'
import glob, os, torch
from torch.utils import cpp_extension as ext
try:
    includes = ext.include_paths(device_type="cuda")
except TypeError:  # torch < 2.6
    includes = ext.include_paths(cuda=True)
lib = os.path.join(os.path.dirname(torch.__file__), "lib")
abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
# The programs call cudart too: the one torch loads (pip's nvidia/*/lib), else the toolkit's.
cudart = sorted(glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "*", "lib",
                                       "libcudart.so.*")))
if cudart:
    where = os.path.dirname(os.path.realpath(cudart[0]))
    runtime = [f"-L{where}", f"-Wl,-rpath,{where}", f"-l:{os.path.basename(cudart[0])}"]
else:
    runtime = ["-L/usr/local/cuda/lib64", "-lcudart"]
print(" ".join([f"-I{p}" for p in includes] + ["-I/usr/local/cuda/include", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
                f"-L{lib}", f"-Wl,-rpath,{lib}", "-Wl,--no-as-needed", "-ltorch_cuda", "-ltorch", "-ltorch_cpu",
                "-lc10_cuda", "-lc10", "-Wl,--as-needed"] + runtime))
PY
)
echo "torch $(python3 -c 'import torch; print(torch.__version__, torch.version.cuda)')"
status=0
for source in testcases/libtorch/*.cpp; do
  name=$(basename "$source" .cpp)
  start=$(date +%s)
  # shellcheck disable=SC2086  # $flags is a list of compiler words
  if g++ -std=c++17 -O0 -g -fno-omit-frame-pointer -Itestcases/libtorch "$source" -o "$BUILD_DIR/testcases/$name" \
      $flags >"$OUT/build-$name.log" 2>&1; then
    echo "built $name in $(($(date +%s) - start)) s"
  else
    echo "FAIL: cannot build $name:"; tail -20 "$OUT/build-$name.log"; status=1
  fi
done
python3 testcases/check_expectations.py --source testcases --build "$BUILD_DIR" \
  --capguard "$BUILD_DIR/capguard" --out "$OUT" --suites libtorch --timeout 300 || status=1
exit $status
