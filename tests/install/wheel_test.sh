#!/usr/bin/env bash
# Builds the Python wheel once (pip, scikit-build-core from PyPI, the same CMake build), installs
# it into a fresh venv and runs capguard from there, as `capguard` and as `python -m capguard`.
# Exits 77 (skipped) only when Python's venv module is missing.
# Usage: wheel_test.sh SOURCE_DIR [PYTHON]
set -euo pipefail
source_dir=$1 python=${2:-python3}
if ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
  echo "skip: $python has no venv/ensurepip (apt-get install python3-venv)"; exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
export PIP_DISABLE_PIP_VERSION_CHECK=1
# The wheel compiles the sources the test build compiled, with the same flags: through ccache
# (scripts/setup.sh configures the test build the same way) they are not compiled again, and
# what this test adds, pip and scikit-build-core configuring, linking and installing the wheel,
# takes about a minute instead of a full build.
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER="env;CCACHE_NOHASHDIR=1;ccache"
  export CMAKE_C_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER
fi

"$python" -m venv "$work/builder"
"$work/builder/bin/pip" wheel --quiet --no-deps -w "$work/dist" "$source_dir" >"$work/build.log" 2>&1 ||
  { tail -n 60 "$work/build.log"; exit 1; }
wheel=$(ls "$work"/dist/capguard-*.whl)
echo "ok: built $(basename "$wheel")"

"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet "$wheel"
"$source_dir/tests/install/check_installed.sh" "$work/venv" "$source_dir"
"$source_dir/tests/install/check_installed.sh" "$work/venv" "$source_dir" \
  "$work/venv/bin/python" -m capguard
