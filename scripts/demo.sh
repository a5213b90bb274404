#!/usr/bin/env bash
# The main job, after ./scripts/setup.sh: shows capguard's reports.
#   With a GPU (nvidia-smi -L works): runs every testcase program under `capguard run`.
#   Without one: re-analyzes the recorded traces in testcases/recorded/traces/ with `capguard report`.
# BUILD_DIR (default build) holds capguard, libcapguard.so and testcases/.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
capguard=$build/capguard
if [[ ! -x $capguard ]]; then
  echo "demo: $capguard is missing: run ./scripts/setup.sh first" >&2
  exit 2
fi

if nvidia-smi -L >/dev/null 2>&1; then
  if [[ ! -d $build/testcases ]]; then
    echo "demo: $build/testcases is missing (configure with nvcc available and CAPGUARD_TESTCASES=ON)" >&2
    exit 2
  fi
  echo "demo: GPU found; running the testcase programs under capguard"
  for program in "$build"/testcases/*; do
    [[ -x $program && ! -d $program && $program != *_shared ]] || continue
    echo
    echo "################ capguard run -- $program"
    "$capguard" run --fail-on never -- "$program" >/dev/null
    echo "(exit status $?)"
  done
  exit 0
fi

echo "demo: no GPU here (nvidia-smi -L failed); analyzing the recorded traces in testcases/recorded/traces/"
shopt -s nullglob
dirs=(testcases/recorded/traces/*/)
traces=(testcases/recorded/traces/*.trace)
if ((${#dirs[@]} == 0 && ${#traces[@]} == 0)); then
  echo "demo: testcases/recorded/traces/ has no recorded traces yet (they are recorded on a GPU machine" \
       "with scripts/gpu_testcases.sh)" >&2
  exit 2
fi
for item in "${dirs[@]}" "${traces[@]}"; do
  echo
  echo "################ capguard report $item"
  "$capguard" report --fail-on never "$item"
done
