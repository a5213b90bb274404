#!/usr/bin/env bash
# GPU-only: every testcase program under `capguard run`, compared with its `// expect:` lines.
# Without a GPU it prints why and exits 77 (ctest: skipped); CI replays the recorded traces
# instead (testcases_recorded_traces, testcases_golden_reports).
#   gpu_testcases_ctest.sh SOURCE_DIR BUILD_DIR
source=$1 build=$2
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIP: no GPU on this machine (nvidia-smi -L failed): the testcase programs were not run"
  exit 77
fi
cd "$source" && BUILD_DIR=$build exec scripts/gpu_testcases.sh "$build/gpu-testcase-results"
