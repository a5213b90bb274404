#!/usr/bin/env bash
# The GPU machine's bundle: what `capguard run` needs there (the tool, libcapguard.so and the
# Python start-up module beside it), stripped of debug information to fit the device tool's
# 64 MiB, plus the C++ benchmarks. Two uses:
#   scripts/gpu_bundle.sh make [BUILD_DIR] [BUNDLE]   here: build/ -> .gpu-bundle/
#   source scripts/gpu_bundle.sh; install_bundle BUNDLE DEST   there: copies it into DEST
install_bundle() {
  local bundle=$1 dest=$2
  mkdir -p "$dest"
  cp "$bundle/capguard" "$bundle/libcapguard.so" "$dest/"
  if [ -d "$bundle/capguard_python_startup" ]; then
    rm -rf "$dest/capguard_python_startup"
    cp -r "$bundle/capguard_python_startup" "$dest/"
  fi
}

make_bundle() {
  local build=${1:-build} bundle=${2:-.gpu-bundle}
  mkdir -p "$bundle"
  strip --strip-debug -o "$bundle/capguard" "$build/capguard"
  strip --strip-debug -o "$bundle/libcapguard.so" "$build/libcapguard.so"
  rm -rf "$bundle/capguard_python_startup"
  cp -r "$build/capguard_python_startup" "$bundle/"
  for b in bench_eager_launch bench_capture_kernels bench_graph_replay bench_multithread_capture \
    bench_analyzer_throughput; do
    [ -x "$build/bench/$b" ] && strip --strip-debug -o "$bundle/$b" "$build/bench/$b"
  done
  du -sh "$bundle"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cd "$(dirname "$0")/.."
  case "${1:-}" in
    make) shift; make_bundle "$@" ;;
    *) echo "usage: scripts/gpu_bundle.sh make [BUILD_DIR] [BUNDLE]" >&2; exit 2 ;;
  esac
fi
