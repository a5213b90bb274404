#!/usr/bin/env bash
# The main job, after ./scripts/setup.sh: five chosen capguard reports that fit a screen, then
# one line about all the rest and the HTML report that holds every case.
#   With a GPU (nvidia-smi -L works): runs the chosen testcase programs under `capguard run`.
#   Without one: re-analyzes their recorded traces (testcases/recorded/traces/) with `capguard report`.
# BUILD_DIR (default build) holds capguard and libcapguard.so (and testcases/ with a GPU).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
capguard=$build/capguard
recorded=testcases/recorded/traces
html=${DEMO_HTML:-/tmp/capguard-demo.html}
if [[ ! -x $capguard ]]; then
  echo "demo: $capguard is missing: run ./scripts/setup.sh first" >&2
  exit 2
fi

# program | what it shows
cases=(
  "unjoined_fork|a C++ capture that forks a stream and never joins it (its picture is in the HTML)"
  "torch_item_in_capture|PyTorch: Tensor.item() inside torch.cuda.graph"
  "escaped_sync_copy|a silent escape: cudaMemcpy during a capture ran once, now, not in the graph"
  "graph_replay_after_free|a graph replaying memory freed after it was instantiated"
  "torch_graph_rebuilt_every_step|PyTorch: the same graph captured again every step"
)

# The first finding of a report, up to where its capture is described: the heading, the
# message, the user's line with its source.
first_finding() {
  awk '/^==[0-9]+==(ERROR|WARNING|NOTE)/ {on = 1}
       on && /^  (capture #|fix:|stream forked|event recorded|last work|capture began)/ {exit}
       on {print}' | cut -c1-160
}

gpu=0
nvidia-smi -L >/dev/null 2>&1 && gpu=1
for entry in "${cases[@]}"; do
  program=${entry%%|*}
  echo "── $program: ${entry#*|}"
  if ((gpu)) && [[ $program == torch_* ]]; then
    (cd testcases/python && "../../$capguard" run --fail-on never -- python3 "$program.py" 2>&1 >/dev/null) |
      first_finding
  elif ((gpu)) && [[ -x $build/testcases/$program ]]; then
    "$capguard" run --fail-on never -- "$build/testcases/$program" 2>&1 >/dev/null | first_finding
  elif [[ -d $recorded/$program ]]; then
    "$capguard" report --fail-on never "$recorded/$program" 2>&1 | first_finding
  else
    echo "   (no recorded trace of $program here)"
  fi
  echo
done

# Every recorded case in one HTML report; its summary line is the one line about the rest.
if [[ -d $recorded ]]; then
  summary=$("$capguard" report --fail-on never --format html -o "$html" "$recorded"/*/ 2>&1 |
            grep '^SUMMARY' | sed 's/^SUMMARY: capguard: //')
  count=$(find "$recorded" -mindepth 1 -maxdepth 1 -type d | wc -l)
  echo "All $count recorded programs: ${summary:-see the report}."
  echo "Every finding, with a picture of each capture: $html"
  echo "Any one of them in full: $capguard report $recorded/<program>   (ls $recorded)"
fi
