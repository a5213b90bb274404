#!/usr/bin/env bash
# Installs what capguard needs to build and test, then configures build/ and builds what a user
# needs: the capguard tool, libcapguard.so and the man page, and, where a GPU is present for
# ./scripts/demo.sh to run them, the testcase programs. ./scripts/test.sh builds the rest (the
# unit tests, the testcase programs, the benchmarks).
# Safe to run again: packages already present are not reinstalled.
# --aarch64: also what the aarch64 cross build (cmake/aarch64-linux-gnu.cmake) and its emulated
# tests need: Debian's cross compiler, the arm64 libraries by multiarch (dpkg's arm64
# architecture added first), qemu-user; with CAPGUARD_SETUP_PACKAGES_ONLY=1 (release.sh,
# scripts/test_aarch64.sh), the packages alone.
set -euo pipefail
cd "$(dirname "$0")/.."
aarch64=0
[[ ${1:-} == --aarch64 ]] && aarch64=1

packages=(cmake g++ make libcli11-dev libfmt-dev doctest-dev libdw-dev libelf-dev zlib1g-dev
          liblzma-dev libbz2-dev libzstd-dev python3 python3-jsonschema python3-pip python3-venv python3-yaml
          python3-pytest help2man dpkg-dev ccache)
# The test command adds what only the tests need (CAPGUARD_EXTRA_PACKAGES, e.g. lintian).
read -r -a extra <<<"${CAPGUARD_EXTRA_PACKAGES:-}"
packages+=("${extra[@]}")
# The static qemu: `capguard run` under emulation starts the program through it, and a dynamic
# one would have this machine's loader read the aarch64 LD_PRELOAD. libpython3.11:arm64: the
# CPython frame reader's test inside a real aarch64 interpreter.
((aarch64)) && packages+=(g++-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user-static
                          libdw-dev:arm64 libelf-dev:arm64 zlib1g-dev:arm64 liblzma-dev:arm64
                          libbz2-dev:arm64 libzstd-dev:arm64 libfmt-dev:arm64 libpython3.11:arm64)
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
if ((aarch64)) && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "setup: adding dpkg's arm64 architecture (multiarch) for the aarch64 libraries"
  $sudo_cmd dpkg --add-architecture arm64
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# scripts/release.sh wants the packages only, and builds its own way.
[[ ${CAPGUARD_SETUP_PACKAGES_ONLY:-} == 1 ]] && exit 0
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH

# CUDA 12's CUPTI and runtime headers (the interposer's CUDA 12 API table), from PyPI.
cuda12_prefix=${CAPGUARD_CUDA12_PREFIX:-/opt/capguard-cuda12}
if ! mkdir -p "$cuda12_prefix" 2>/dev/null || [[ ! -w $cuda12_prefix ]]; then
  cuda12_prefix=${XDG_CACHE_HOME:-$HOME/.cache}/capguard-cuda12
fi
./scripts/cuda12_toolchain.sh --headers-only "$cuda12_prefix" >/dev/null

build=${BUILD_DIR:-build}
# Through ccache, ignoring the build directory (CCACHE_NOHASHDIR), so that another build of the
# same sources with the same flags, like the wheel that the python_wheel test builds, reuses
# these objects instead of compiling everything again.
launcher=$(command -v ccache >/dev/null && echo "env;CCACHE_NOHASHDIR=1;ccache" || true)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAPGUARD_CUDA12_PREFIX="$cuda12_prefix" -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" \
  -DCMAKE_C_COMPILER_LAUNCHER="$launcher" >/dev/null
targets=(capguard capguard_interposer)
grep -q '^HELP2MAN:FILEPATH=/' "$build/CMakeCache.txt" && targets+=(capguard_man)
# demo.sh runs the testcase programs only where a GPU is; without one it re-analyzes the
# recorded traces, which needs capguard alone.
if nvidia-smi -L >/dev/null 2>&1 && grep -q '^CAPGUARD_TESTCASES:BOOL=ON' "$build/CMakeCache.txt"; then
  targets+=(testcases)
fi
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
