#!/usr/bin/env bash
# Runs every testcase program under capguard on the GPU machine and compares the findings with the
# `// expect:` lines of its source. Builds nothing: the build directory travels with the tree.
#
#   scripts/gpu_testcases.sh [OUTPUT_DIR] [check_expectations.py options, e.g. --only 'fork']
#
# BUILD_DIR (default build) must hold capguard, libcapguard.so and testcases/. Reports
# (<program>.json), traces (traces/<program>/), logs and results.json go to OUTPUT_DIR, else $OUT,
# else ./testcase-results. The table is printed last; the exit status is the checker's.
set -uo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build}"
out_dir="${OUT:-testcase-results}"
if [[ $# -gt 0 && "$1" != -* ]]; then
  out_dir="$1"
  shift
fi
for needed in "$build_dir/capguard" "$build_dir/testcases"; do
  if [[ ! -e "$needed" ]]; then
    echo "gpu_testcases: $needed is missing (build the tree first, then carry $build_dir)" >&2
    exit 2
  fi
done
mkdir -p "$out_dir"

{
  echo "# $(date -u +%FT%TZ) $(hostname)"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
  else
    echo "nvidia-smi: not available"
  fi
} >"$out_dir/machine.txt"

python3 testcases/check_expectations.py --source testcases --build "$build_dir" \
  --capguard "$build_dir/capguard" --out "$out_dir" "$@" >"$out_dir/table.txt" 2>"$out_dir/checker.stderr"
status=$?
cat "$out_dir/machine.txt" "$out_dir/checker.stderr"
cat "$out_dir/table.txt"
exit "$status"
