#!/usr/bin/env bash
# Installs what building and testing against CUDA 12 needs, beside the CUDA 13 toolkit:
#  - PREFIX/toolkit-12.4: nvcc, the headers, static and shared cudart and CUPTI 12.4, from Debian
#    trixie's non-free packages, extracted (not installed: the programs it builds must still start
#    on the GPU machine's older glibc, and nothing here replaces the system's CUDA 13);
#  - PREFIX/cu12-wheels: the CUDA 12.9 runtime and CUPTI from PyPI (nvidia-cuda-runtime-cu12,
#    nvidia-cuda-cupti-cu12), the ones PyTorch's newest cu12x wheels bring; their headers are what
#    interposer/api_table_12.inc is generated from and compiled against.
#   scripts/cuda12_toolchain.sh [--headers-only] [PREFIX]     (default PREFIX: /opt/capguard-cuda12)
# --headers-only fetches the two small wheels alone (what the CPU build needs). Safe to run again.
set -euo pipefail
headers_only=0
if [[ ${1:-} == --headers-only ]]; then headers_only=1; shift; fi
prefix=${1:-${CAPGUARD_CUDA12_PREFIX:-/opt/capguard-cuda12}}
runtime_version=12.9.79
cupti_version=12.9.79
mkdir -p "$prefix"

wheels=$prefix/cu12-wheels
if [[ ! -f $wheels/.complete-$runtime_version ]]; then
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
    --platform manylinux_2_25_x86_64 --python-version 3.11 -d "$tmp" \
    "nvidia-cuda-runtime-cu12==$runtime_version" "nvidia-cuda-cupti-cu12==$cupti_version"
  rm -rf "$wheels" && mkdir -p "$wheels"
  for w in "$tmp"/*.whl; do python3 -m zipfile -e "$w" "$wheels"; done
  rm -rf "$tmp"
  touch "$wheels/.complete-$runtime_version"
fi
echo "cuda12: headers in $wheels/nvidia/cuda_runtime/include and $wheels/nvidia/cuda_cupti/include"
((headers_only)) && exit 0

toolkit=$prefix/toolkit-12.4
if [[ ! -f $toolkit/.complete ]]; then
  work=$(mktemp -d)
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs" "$work/root"
  echo "deb http://deb.debian.org/debian trixie main contrib non-free" >"$work/sources.list"
  apt_options=(-o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
               -o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/cache"
               -o APT::Sandbox::User=root)
  apt-get "${apt_options[@]}" update -qq
  (cd "$work/debs" && apt-get "${apt_options[@]}" download -qq nvidia-cuda-toolkit \
     nvidia-cuda-dev libcudart12 libnvvm4 libcupti-dev libcupti12 libcu++-dev libcub-dev \
     libthrust-dev)
  for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
  # A toolkit root in the usual layout (bin, include, lib64, nvvm), so that CMake's CUDAToolkit
  # and nvcc find everything from nvcc's own place; only what building the testcases needs.
  r=$work/root/usr
  rm -rf "$toolkit" && mkdir -p "$toolkit"/{bin,lib64/stubs,nvvm/libdevice}
  cp -a "$r"/lib/nvidia-cuda-toolkit/bin/{nvcc,cicc,crt} "$toolkit/bin/"
  for tool in ptxas fatbinary nvlink cudafe++ bin2c nvprune cuobjdump nvdisasm cu++filt; do
    cp -a "$r/bin/$tool" "$toolkit/bin/"
  done
  cp -a "$r/include" "$toolkit/include"
  cp -a "$r"/lib/x86_64-linux-gnu/{libcudart*,libcupti*,libcudadevrt.a,libculibos.a} "$toolkit/lib64/"
  cp -a "$r"/lib/x86_64-linux-gnu/stubs/libcuda.so "$toolkit/lib64/stubs/"
  cp -a "$r"/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc "$toolkit/nvvm/libdevice/"
  cat >"$toolkit/bin/nvcc.profile" <<'PROFILE'
TOP = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
PATH += $(_HERE_):
INCLUDES += "-I$(TOP)/include" $(_SPACE_)
LIBRARIES =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"
PROFILE
  rm -rf "$work"
  "$toolkit/bin/nvcc" --version | tail -2
  touch "$toolkit/.complete"
fi
echo "cuda12: nvcc in $toolkit/bin"
