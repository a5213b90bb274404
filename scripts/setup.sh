#!/usr/bin/env bash
# Installs what capguard needs to build and test, then configures and builds it in build/.
# Safe to run again: packages already present are not reinstalled.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make libcli11-dev libfmt-dev doctest-dev libdw-dev libelf-dev zlib1g-dev
          liblzma-dev libbz2-dev libzstd-dev python3 python3-jsonschema python3-venv help2man
          dpkg-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH

build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)"
