#!/usr/bin/env bash
# How the first idle window of CUPTI's detach (CAPGUARD_DETACH_IDLE_MS) shows in the replay
# benchmark: native and capguard with each window, ROUNDS rounds, the order rotating per round.
#   BUILD=.gpu-bundle/perf ROUNDS=7 WINDOWS='50 20 10 5 0 off' REPLAYS=20000 bench/detach_window.sh
set -uo pipefail
B=${BUILD:-build}
modes=(native ${WINDOWS:-50 20 10 5 0 off})
for round in $(seq 1 "${ROUNDS:-7}"); do
  n=${#modes[@]}
  for i in $(seq 0 $((n - 1))); do
    mode=${modes[$(((i + round) % n))]}
    cmd=("$B/bench/bench_graph_replay" "${REPLAYS:-20000}")
    if [ "$mode" != native ]; then
      cmd=(env CAPGUARD_DETACH_IDLE_MS="$mode" "$B/capguard" run -- "${cmd[@]}")
    fi
    value=$("${cmd[@]}" 2>/dev/null | awk '$1 == "metric" {print $3; exit}')
    echo "round $round $mode $value"
  done
done | tee /dev/stderr | python3 -c '
import sys, statistics
rows = [l.split() for l in sys.stdin if l.startswith("round") and len(l.split()) == 4]
native = {r[1]: float(r[3]) for r in rows if r[2] == "native"}
modes = []
for r in rows:
    if r[2] not in modes: modes.append(r[2])
for m in modes:
    v = [float(r[3]) for r in rows if r[2] == m]
    q = [float(r[3]) / native[r[1]] for r in rows if r[2] == m]
    print(f"{m:8} median {statistics.median(v):8.3f}  ratio {statistics.median(q):.3f} ({min(q):.3f}-{max(q):.3f})")
'
