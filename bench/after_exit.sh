#!/usr/bin/env bash
# Where a whole run's time after the program exits goes, on the GPU machine: one
# program natively and under `capguard run` (CAPGUARD_STARTUP_TIMES=1: its points child_exited,
# traces_waited, analysis_done, report_written), then `capguard report` alone on the same traces,
# with the symbol cache warm and with none. ROUNDS rounds, every number printed.
#   CAPGUARD=build/capguard bench/after_exit.sh python3 testcases/python/jax_jit_loop_ok.py
set -uo pipefail
capguard=${CAPGUARD:-build/capguard}
rounds=${ROUNDS:-3}
work=$(mktemp -d)
cache=$work/cache
ms() { python3 -c "import sys; print(f'{(int(sys.argv[2]) - int(sys.argv[1])) / 1e6:.0f}')" "$1" "$2"; }
wall() { local s=$(date +%s%N); "$@" >/dev/null 2>&1; echo $((($(date +%s%N) - s) / 1000000)); }
for r in $(seq "$rounds"); do
  native=$(wall "$@")
  dir=$work/run$r
  start=$(date +%s%N)
  CAPGUARD_STARTUP_TIMES=1 CAPGUARD_SYMBOL_CACHE=$cache "$capguard" run --trace-dir "$dir" -- "$@" >/dev/null 2>&1
  run=$((($(date +%s%N) - start) / 1000000))
  f=$(ls "$dir"/capguard-run.*.startup | head -1)
  p() { awk -v n="$1" '$1=="point" && $2==n {print $3}' "$f"; }
  warm=$(wall "$capguard" report --symbol-cache "$cache" "$dir")
  cold=$(wall "$capguard" report --symbol-cache off "$dir")
  echo "round $r: native ${native} ms, run ${run} ms; after the child exited: wait" \
    "$(ms "$(p child_exited)" "$(p traces_waited)") ms, analysis" \
    "$(ms "$(p traces_waited)" "$(p analysis_done)") ms, report" \
    "$(ms "$(p analysis_done)" "$(p report_written)") ms; report alone: warm ${warm} ms, no cache ${cold} ms;" \
    "traces $(ls "$dir"/*.trace | wc -l), $(cat "$dir"/*.trace | wc -c) bytes"
done
rm -rf "$work"
