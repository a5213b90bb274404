#!/usr/bin/env bash
# Builds the testcase programs with CUDA 12.4, static and shared cudart as with CUDA
# 13, and packs them for the GPU machine, which has CUDA 13 alone: the programs, CUDA 12.4's and
# 12.9's libcudart.so.12, and CUPTI 12.9 (what PyTorch's newest cu12x wheels bring), laid out as
# a CUDA 12 installation would be. scripts/gpu_cuda12.sh runs them there.
#   scripts/build_cuda12_testcases.sh [BUNDLE_DIR]     (default .cuda12-bundle, git-ignored;
#                                                       it holds one bundle.tar.xz)
# Programs that use calls CUDA 12.4 lacks do not compile; they are listed in BUNDLE/skipped.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
prefix=${CAPGUARD_CUDA12_PREFIX:-/opt/capguard-cuda12}
./scripts/cuda12_toolchain.sh "$prefix" >/dev/null
toolkit=$prefix/toolkit-12.4
bundle=${1:-.cuda12-bundle}
build=${BUILD_DIR_CUDA12:-build-cuda12}
mkdir -p "$build/wrapper"
cat >"$build/wrapper/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(capguard_testcases_cuda12 LANGUAGES C CXX)
find_package(CUDAToolkit REQUIRED)
find_package(Threads REQUIRED)
add_subdirectory($root/testcases testcases)
CMAKE
launcher=$(command -v ccache >/dev/null && echo "env;CCACHE_NOHASHDIR=1;ccache" || true)
cmake -S "$build/wrapper" -B "$build" -DCMAKE_CUDA_COMPILER="$toolkit/bin/nvcc" \
  -DCUDAToolkit_ROOT="$toolkit" -DCAPGUARD_TESTCASE_SUITES=OFF \
  -DCMAKE_CUDA_COMPILER_LAUNCHER="$launcher" -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" >/dev/null
# Every program that compiles with 12.4 (make -k goes on past the others, which are named).
cmake --build "$build" --target testcases -j"$(nproc)" -- -k >"$build/build.log" 2>&1 || true
rm -rf "$bundle" && mkdir -p "$bundle/testcases" "$bundle/cuda-12/lib64"
grep -E '^[^ ]+\.(cu|cpp)\([0-9]+\): error|error:' "$build/build.log" | sort -u | cut -c1-240 \
  >"$bundle/skipped.txt" || true
cp "$build"/testcases/* "$bundle/testcases/" 2>/dev/null || true
# A CUDA 12.4 installation (CUDA_HOME) with its CUPTI, and the 12.9 runtime as PyPI lays it out.
cp -a "$toolkit"/lib64/libcudart.so* "$bundle/cuda-12/lib64/"
wheels=$prefix/cu12-wheels/nvidia
cp -a "$wheels/cuda_cupti/lib/libcupti.so.12" "$bundle/cuda-12/lib64/"
mkdir -p "$bundle/site-packages/nvidia/cuda_runtime/lib" "$bundle/site-packages/nvidia/cuda_cupti/lib"
cp -a "$wheels/cuda_runtime/lib/libcudart.so.12" "$bundle/site-packages/nvidia/cuda_runtime/lib/"
cp -a "$wheels/cuda_cupti/lib/libcupti.so.12" "$bundle/site-packages/nvidia/cuda_cupti/lib/"
# The library programs that need no library absent from the GPU machine's CUDA 12 setup: CUB and
# Thrust (headers), and the programs that are their own CUPTI client (CUPTI sharing on CUDA 12),
# built as testcases/libs/CMakeLists.txt builds them (shared cudart).
for source in testcases/libs/{cub,thrust,cupti_client}_*.cu; do
  name=$(basename "$source" .cu)
  "$toolkit/bin/nvcc" -g -lineinfo -O0 -std=c++17 -arch=sm_90 -cudart shared \
    -Xcompiler=-fno-omit-frame-pointer -Itestcases -o "$bundle/testcases/$name" "$source" \
    -lcupti -Xlinker -rpath="$toolkit/lib64" || echo "$name: not compiled" >>"$bundle/skipped.txt"
done
# The in-program benchmarks (bench/*.cu) built with 12.4 as bench/CMakeLists.txt builds them
# with 13 (static cudart, -O2): the ratios on CUDA 12 against CUDA 13's (gpu_cuda12.sh --bench).
mkdir -p "$bundle/bench"
for name in eager_launch capture_kernels graph_replay; do
  "$toolkit/bin/nvcc" -O2 -std=c++17 -arch=sm_90 -o "$bundle/bench/bench_$name" "bench/$name.cu"
done
# A CUDA 11 runtime, which capguard must refuse with exit 3 (PyPI's nvidia-cuda-runtime-cu11).
mkdir -p "$bundle/cuda-11"
tmp=$(mktemp -d)
python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
  --python-version 3.11 -d "$tmp" "nvidia-cuda-runtime-cu11==11.8.89"
python3 -m zipfile -e "$tmp"/*.whl "$tmp/x"
cp "$tmp"/x/nvidia/cuda_runtime/lib/libcudart.so.11.0 "$bundle/cuda-11/"
rm -rf "$tmp"
# One xz archive (the static programs share most of their bytes): what the GPU run carries.
programs=$(ls "$bundle/testcases" | wc -l)
tar cJf "$bundle.tar.xz" -C "$bundle" .
rm -rf "$bundle" && mkdir -p "$bundle" && mv "$bundle.tar.xz" "$bundle/bundle.tar.xz"
echo "cuda12: $programs programs in $bundle/bundle.tar.xz ($(du -sh "$bundle" | cut -f1));" \
  "not compiled: $(tar xJOf "$bundle/bundle.tar.xz" ./skipped.txt | wc -l)"
