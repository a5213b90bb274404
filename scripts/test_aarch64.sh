#!/usr/bin/env bash
# The aarch64 build (Grace Hopper, Grace Blackwell), cross-built here and tested under qemu-user:
# the whole CPU unit suite (the interposer's CPU tests included, the CPython frame reader inside
# an aarch64 libpython 3.11), the fake CUDA/CUPTI/NVTX injection tests through the aarch64
# libcapguard.so, and every recorded trace (x86-64 recordings) analyzed by the aarch64 capguard
# to the same golden reports. Called by scripts/test.sh; skipped, saying why, where the cross
# toolchain or qemu cannot be installed. CAPGUARD_AARCH64=0 skips it.
# Usage: scripts/test_aarch64.sh   (BUILD_DIR_AARCH64: the build directory, default build-aarch64)
set -uo pipefail
cd "$(dirname "$0")/.."
source_dir=$PWD
build=${BUILD_DIR_AARCH64:-build-aarch64}
skip() { echo "test_aarch64: skipped: $*"; exit 0; }

[[ ${CAPGUARD_AARCH64:-1} == 0 ]] && skip "CAPGUARD_AARCH64=0"
command -v apt-get >/dev/null || command -v aarch64-linux-gnu-g++ >/dev/null ||
  skip "no apt-get to install the cross toolchain and qemu, and no aarch64-linux-gnu-g++"
CAPGUARD_SETUP_PACKAGES_ONLY=1 ./scripts/setup.sh --aarch64 ||
  echo "test_aarch64: could not install the aarch64 packages (offline?)"
command -v aarch64-linux-gnu-g++ >/dev/null || skip "no cross compiler (g++-aarch64-linux-gnu)"
emulator=$(command -v qemu-aarch64-static) || skip "no qemu-aarch64-static (qemu-user-static)"
[[ -f /usr/lib/aarch64-linux-gnu/libdw.a ]] || skip "no arm64 libdw.a (libdw-dev:arm64)"

set -e
start=$(date +%s)
cuda12_prefix=${CAPGUARD_CUDA12_PREFIX:-/opt/capguard-cuda12}
[[ -f $cuda12_prefix/cu12-wheels/nvidia/cuda_cupti/include/cupti.h ]] ||
  cuda12_prefix=${XDG_CACHE_HOME:-$HOME/.cache}/capguard-cuda12
# ccache as for the x86-64 build (scripts/setup.sh): a second run compiles nothing again.
launcher=$(command -v ccache >/dev/null && echo "env;CCACHE_NOHASHDIR=1;ccache" || true)
cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE="$source_dir/cmake/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAPGUARD_TESTCASES=OFF \
  -DCAPGUARD_CUDA12_PREFIX="$cuda12_prefix" -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" \
  -DCMAKE_C_COMPILER_LAUNCHER="$launcher" >/dev/null
# Only what the emulated tests run (the layer checks, benchmarks and CI samples are the x86-64
# build's).
cmake --build "$build" -j"$(nproc)" --target capguard capguard_interposer capguard_tests \
  fake_cupti cupti_share_client fake_cuda next_a next_b preloaded_dlsym_client local_user \
  preloaded_local_client fake_nvtx nvtx_ranges_client
build=$(cd "$build" && pwd)
built=$(date +%s)
set +e

passed=0 failed=0
run_test() {  # run_test NAME COMMAND...
  local name=$1 t0 status
  shift
  t0=$(date +%s)
  "$@" >"$build/$name.log" 2>&1
  status=$?
  if [ $status = 0 ]; then
    passed=$((passed + 1))
    echo "test_aarch64: ok: $name ($(($(date +%s) - t0)) s): $(tail -n 1 "$build/$name.log")"
  else
    failed=$((failed + 1))
    echo "test_aarch64: FAIL: $name (exit $status):"
    tail -n 40 "$build/$name.log" | sed 's/^/    /'
  fi
}
export CAPGUARD_TEST_EMULATOR=$emulator
export CAPGUARD_SYMBOL_CACHE=$build/test-symbol-cache
# The CPython frame reader inside an aarch64 interpreter (libpython3.11:arm64, Debian's).
libpython=/usr/lib/aarch64-linux-gnu/libpython3.11.so.1.0
python_env=()
if [[ -f $libpython ]]; then
  python_env=(CAPGUARD_TEST_LIBPYTHON=$libpython CAPGUARD_TEST_PYTHONHOME=/usr)
else
  echo "test_aarch64: no $libpython (libpython3.11:arm64): the CPython frame reader is not run"
fi
run_test unit env "${python_env[@]}" "$emulator" "$build/capguard_tests"
run_test preloaded_dlsym tests/preloaded_dlsym_test.sh "$build/libcapguard.so" \
  "$build/preloaded_dlsym_client" "$build/fake_cuda" "$build/preloaded_local_client" \
  "$build/liblocal_user.so"
run_test cupti_share tests/cupti_share_test.sh "$build/capguard" "$build/cupti_share_client" \
  "$build/fake_cupti"
run_test rehearse_nvtx tests/rehearse_nvtx_test.sh "$build/capguard" "$build/nvtx_ranges_client" \
  "$build/fake_nvtx" "$source_dir/python"
# The goldens' checker runs the command it is given: the aarch64 capguard through qemu.
printf '#!/bin/sh\nexec %q %q "$@"\n' "$emulator" "$build/capguard" >"$build/capguard-emulated"
chmod +x "$build/capguard-emulated"
run_test golden_reports python3 testcases/check_golden.py --capguard "$build/capguard-emulated"
run_test golden_reports_cuda12 python3 testcases/check_golden.py \
  --capguard "$build/capguard-emulated" --recorded testcases/recorded-cuda12
echo "test_aarch64: build $((built - start)) s, tests $(($(date +%s) - built)) s"
echo "aarch64 (qemu): $passed passed, $failed failed"
[ $failed = 0 ]
